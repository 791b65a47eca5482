/**
 * A command-line flag set with spf13/pflag v1.0.6 semantics in
 * ContinueOnError mode: `--name=value`, `--name value`, optional values for
 * bool-like flags, one-letter shorthands and groups, `--`, interspersed
 * non-flag arguments, name normalization, deprecation notices and `changed`
 * tracking. Error texts are pflag's, so callers can wrap them unchanged.
 * @module
 */
import { goQuote, goQuoteChar } from "../util/go_strconv.ts";
import { errorMessage } from "../util/error_message.ts";

/** How `--help` decides whether a default is the type's zero value. */
export type ZeroKind =
  | "bool"
  | "duration"
  | "number"
  | "string"
  | "slice"
  | "custom";

/** A typed flag value: parses text (`set`) and prints itself (`text`). */
export interface FlagValue {
  /** The pflag `Value.Type()` name (`int32`, `mapStringString`, …). */
  readonly type: string;
  /** Which pflag zero-value rule applies to this value. */
  readonly zero: ZeroKind;
  /** Parses and stores `value`; throws an Error whose message is the Go text. */
  set(value: string): void;
  /** The current value as pflag's `String()` shows it. */
  text(): string;
}

/** A flag as registered. */
export interface FlagDefinition {
  name: string;
  shorthand?: string;
  usage: string;
  value: FlagValue;
  /** The value used for a bare `--name` (pflag NoOptDefVal). */
  noOptDefVal?: string;
  /** Deprecation message; a notice is written whenever the flag is set. */
  deprecated?: string;
  /** The default `--help` shows; default: the value's text when added. */
  defValue?: string;
}

/** A registered flag plus its parse state. */
export interface Flag extends Readonly<FlagDefinition> {
  /** `Value.String()` at registration time (pflag DefValue). */
  readonly defValue: string;
  /** True once the flag was set on the command line. */
  readonly changed: boolean;
}

/** A parse error; `message` is pflag's text (`unknown flag: --foo`). */
export class FlagParseError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "FlagParseError";
  }
}

/** Thrown when `--help`/`-h` is given but no such flag is registered (pflag ErrHelp). */
export class HelpRequestedError extends FlagParseError {
  constructor() {
    super("pflag: help requested");
    this.name = "HelpRequestedError";
  }
}

/** Options for {@linkcode FlagSet}. */
export interface FlagSetOptions {
  /** Maps typed and registered names to one canonical form. */
  normalize?: (name: string) => string;
  /** Receives deprecation notices (pflag's output writer); default: discard. */
  output?: (text: string) => void;
}

/** cliflag `WordSepNormalizeFunc`: every `_` becomes `-`. */
export function wordSepNormalize(name: string): string {
  return name.includes("_") ? name.replaceAll("_", "-") : name;
}

interface MutableFlag extends FlagDefinition {
  defValue: string;
  changed: boolean;
}

/** The pflag-compatible flag set. */
export class FlagSet {
  #formal = new Map<string, MutableFlag>();
  #shorthands = new Map<string, MutableFlag>();
  #args: string[] = [];
  #argsLenAtDash = -1;
  #normalize: (name: string) => string;
  #output: (text: string) => void;

  constructor(options: FlagSetOptions = {}) {
    this.#normalize = options.normalize ?? ((n) => n);
    this.#output = options.output ?? (() => {});
  }

  /** Registers a flag; a duplicate name or shorthand is a programming error. */
  add(definition: FlagDefinition): Flag {
    const name = this.#normalize(definition.name);
    if (this.#formal.has(name)) throw new Error(`flag redefined: ${name}`);
    const flag: MutableFlag = {
      ...definition,
      name,
      defValue: definition.defValue ?? definition.value.text(),
      changed: false,
    };
    this.#formal.set(name, flag);
    if (definition.shorthand !== undefined) {
      if (definition.shorthand.length !== 1) {
        throw new Error(
          `shorthand ${JSON.stringify(definition.shorthand)} is not one letter`,
        );
      }
      if (this.#shorthands.has(definition.shorthand)) {
        throw new Error(`shorthand redefined: ${definition.shorthand}`);
      }
      this.#shorthands.set(definition.shorthand, flag);
    }
    return flag;
  }

  /** Looks a flag up by (un-normalized) name. */
  lookup(name: string): Flag | undefined {
    return this.#formal.get(this.#normalize(name));
  }

  /** True when the flag was given on the command line. */
  changed(name: string): boolean {
    return this.lookup(name)?.changed ?? false;
  }

  /** All flags sorted by name, as pflag's VisitAll gives them. */
  flags(): Flag[] {
    return [...this.#formal.values()].sort((a, b) =>
      a.name < b.name ? -1 : a.name > b.name ? 1 : 0
    );
  }

  /** Non-flag arguments collected by the last parse. */
  args(): string[] {
    return [...this.#args];
  }

  /** Index in {@linkcode args} where `--` was seen, or -1. */
  argsLenAtDash(): number {
    return this.#argsLenAtDash;
  }

  /** Sets a flag by name as if it had been given as `--name=value`. */
  set(name: string, value: string): void {
    const flag = this.#formal.get(this.#normalize(name));
    if (flag === undefined) throw new FlagParseError(`no such flag -${name}`);
    this.#apply(flag, value);
  }

  /** Parses argv (without the program name). Throws {@linkcode FlagParseError}. */
  parse(argv: readonly string[]): void {
    this.#args = [];
    this.#argsLenAtDash = -1;
    let rest = [...argv];
    while (rest.length > 0) {
      const arg = rest.shift() as string;
      if (arg.length < 2 || arg[0] !== "-") {
        this.#args.push(arg);
        continue;
      }
      if (arg[1] === "-") {
        if (arg.length === 2) {
          this.#argsLenAtDash = this.#args.length;
          this.#args.push(...rest);
          return;
        }
        rest = this.#parseLong(arg, rest);
      } else {
        rest = this.#parseShortGroup(arg, rest);
      }
    }
  }

  #parseLong(arg: string, rest: string[]): string[] {
    const body = arg.slice(2);
    if (body === "" || body[0] === "-" || body[0] === "=") {
      throw new FlagParseError(`bad flag syntax: ${arg}`);
    }
    const eq = body.indexOf("=");
    const name = eq < 0 ? body : body.slice(0, eq);
    const flag = this.#formal.get(this.#normalize(name));
    if (flag === undefined) {
      if (name === "help") throw new HelpRequestedError();
      throw new FlagParseError(`unknown flag: --${name}`);
    }
    let value: string;
    if (eq >= 0) value = body.slice(eq + 1);
    else if (flag.noOptDefVal !== undefined && flag.noOptDefVal !== "") {
      value = flag.noOptDefVal;
    } else if (rest.length > 0) {
      value = rest[0] as string;
      rest = rest.slice(1);
    } else throw new FlagParseError(`flag needs an argument: ${arg}`);
    this.#apply(flag, value);
    return rest;
  }

  #parseShortGroup(arg: string, rest: string[]): string[] {
    // pflag hands every letter of the group the arguments as they were
    // before the group, so only the last consumer's choice survives.
    let shorthands = arg.slice(1);
    let out = rest;
    while (shorthands.length > 0) {
      const result = this.#parseShort(shorthands, rest);
      shorthands = result.shorthands;
      out = result.rest;
    }
    return out;
  }

  #parseShort(
    shorthands: string,
    rest: string[],
  ): { shorthands: string; rest: string[] } {
    const c = shorthands[0] as string;
    let remaining = shorthands.slice(1);
    const flag = this.#shorthands.get(c);
    if (flag === undefined) {
      if (c === "h") throw new HelpRequestedError();
      throw new FlagParseError(
        `unknown shorthand flag: ${goQuoteChar(c)} in -${shorthands}`,
      );
    }
    let value: string;
    let out = rest;
    if (shorthands.length > 2 && shorthands[1] === "=") {
      value = shorthands.slice(2);
      remaining = "";
    } else if (flag.noOptDefVal !== undefined && flag.noOptDefVal !== "") {
      value = flag.noOptDefVal;
    } else if (shorthands.length > 1) {
      value = shorthands.slice(1);
      remaining = "";
    } else if (rest.length > 0) {
      value = rest[0] as string;
      out = rest.slice(1);
    } else {
      throw new FlagParseError(
        `flag needs an argument: ${goQuoteChar(c)} in -${shorthands}`,
      );
    }
    this.#apply(flag, value);
    return { shorthands: remaining, rest: out };
  }

  #apply(flag: MutableFlag, value: string): void {
    try {
      flag.value.set(value);
    } catch (error) {
      const flagName = flag.shorthand !== undefined
        ? `-${flag.shorthand}, --${flag.name}`
        : `--${flag.name}`;
      const reason = errorMessage(error);
      throw new FlagParseError(
        `invalid argument ${goQuote(value)} for ${
          goQuote(flagName)
        } flag: ${reason}`,
        { cause: error },
      );
    }
    flag.changed = true;
    if (flag.deprecated) {
      this.#output(
        `Flag --${flag.name} has been deprecated, ${flag.deprecated}\n`,
      );
    }
  }
}
