import assert from "node:assert/strict";
import {
  FlagParseError,
  FlagSet,
  HelpRequestedError,
  wordSepNormalize,
} from "./flag_set.ts";
import { createValue } from "./values.ts";

function newSet(output?: (s: string) => void) {
  const store: Record<string, unknown> = {};
  const slot = (key: string) => ({
    get: () => store[key],
    set: (v: unknown) => {
      store[key] = v;
    },
  });
  const set = new FlagSet({
    normalize: wordSepNormalize,
    ...(output ? { output } : {}),
  });
  set.add({
    name: "port",
    usage: "p",
    value: createValue("int32", slot("port")),
  });
  set.add({
    name: "fail-swap-on",
    usage: "f",
    value: createValue("bool", slot("failSwapOn")),
    noOptDefVal: "true",
  });
  set.add({
    name: "v",
    shorthand: "v",
    usage: "v",
    value: createValue("level", slot("v")),
  });
  set.add({
    name: "help",
    shorthand: "h",
    usage: "h",
    value: createValue("bool", slot("help")),
    noOptDefVal: "true",
  });
  set.add({
    name: "node_labels",
    usage: "n",
    value: createValue("configurationMap", slot("labels")),
  });
  set.add({
    name: "old",
    usage: "o",
    value: createValue("string", slot("old")),
    deprecated: "use --new instead",
  });
  return { set, store };
}

function parseError(argv: string[]): string {
  const { set } = newSet();
  try {
    set.parse(argv);
  } catch (error) {
    assert.ok(error instanceof FlagParseError);
    return error.message;
  }
  throw new Error("expected a parse error");
}

Deno.test("FlagSet.parse() accepts --f=v, --f v, bare bools and interspersed args", () => {
  const { set, store } = newSet();
  set.parse(["a", "--port=1", "b", "--port", "2", "--fail-swap-on", "c"]);
  assert.equal(store.port, 2);
  assert.equal(store.failSwapOn, true);
  assert.deepEqual(set.args(), ["a", "b", "c"]);
  assert.equal(set.changed("port"), true);
  assert.equal(set.changed("v"), false);
});

Deno.test("FlagSet.parse() does not let a bare bool consume the next argument", () => {
  const { set, store } = newSet();
  set.parse(["--fail-swap-on", "false"]);
  assert.equal(store.failSwapOn, true);
  assert.deepEqual(set.args(), ["false"]);
});

Deno.test("FlagSet.parse() handles -v 4, -v=4 and -v4", () => {
  for (const argv of [["-v", "4"], ["-v=4"], ["-v4"], ["--v=4"]]) {
    const { set, store } = newSet();
    set.parse(argv);
    assert.equal(store.v, 4, argv.join(" "));
  }
});

Deno.test("FlagSet.parse() treats -- as the end of flags and - as an argument", () => {
  const { set, store } = newSet();
  set.parse(["-", "--port=3", "--", "--port=4", "x"]);
  assert.equal(store.port, 3);
  assert.deepEqual(set.args(), ["-", "--port=4", "x"]);
  assert.equal(set.argsLenAtDash(), 1);
});

Deno.test("FlagSet normalizes _ to - in typed and registered names", () => {
  const { set, store } = newSet();
  set.parse([
    "--node_labels=a=b",
    "--node-labels",
    "c=d",
    "--fail_swap_on=false",
  ]);
  assert.deepEqual(store.labels, { a: "b", c: "d" });
  assert.equal(store.failSwapOn, false);
  assert.ok(set.lookup("node-labels"));
  assert.equal(set.lookup("node_labels")?.name, "node-labels");
});

Deno.test("FlagSet.parse() splits shorthand groups: -hv3", () => {
  const { set, store } = newSet();
  set.parse(["-hv3"]);
  assert.equal(store.help, true);
  assert.equal(store.v, 3);
});

Deno.test("FlagSet.parse() errors have pflag's texts", () => {
  assert.equal(parseError(["--foo"]), "unknown flag: --foo");
  assert.equal(parseError(["--foo_bar=1"]), "unknown flag: --foo_bar");
  assert.equal(parseError(["-x"]), "unknown shorthand flag: 'x' in -x");
  assert.equal(parseError(["-help"]), "unknown shorthand flag: 'e' in -elp");
  assert.equal(parseError(["--port"]), "flag needs an argument: --port");
  assert.equal(parseError(["-v"]), "flag needs an argument: 'v' in -v");
  assert.equal(parseError(["---x"]), "bad flag syntax: ---x");
  assert.equal(parseError(["--=x"]), "bad flag syntax: --=x");
  assert.equal(
    parseError(["--port=x"]),
    'invalid argument "x" for "--port" flag: strconv.ParseInt: parsing "x": invalid syntax',
  );
  assert.equal(
    parseError(["-v", "-1"]),
    'invalid argument "-1" for "-v, --v" flag: strconv.ParseUint: parsing "-1": invalid syntax',
  );
  assert.equal(
    parseError(["--fail-swap-on=maybe"]),
    'invalid argument "maybe" for "--fail-swap-on" flag: strconv.ParseBool: parsing "maybe": invalid syntax',
  );
  assert.equal(
    parseError(["--port=99999999999"]),
    'invalid argument "99999999999" for "--port" flag: strconv.ParseInt: parsing "99999999999": value out of range',
  );
});

Deno.test("FlagSet.parse() stops at the first error even after non-flag args", () => {
  assert.equal(parseError(["cmd", "--foo"]), "unknown flag: --foo");
});

Deno.test("FlagSet.parse() keeps the last value of a repeated scalar", () => {
  const { set, store } = newSet();
  set.parse(["--port=1", "--port=2", "--fail-swap-on=false", "--fail-swap-on"]);
  assert.equal(store.port, 2);
  assert.equal(store.failSwapOn, true);
});

Deno.test("FlagSet writes a deprecation notice each time a deprecated flag is set", () => {
  const out: string[] = [];
  const { set } = newSet((s) => out.push(s));
  set.parse(["--old=a", "--old", "b", "--port=1"]);
  assert.deepEqual(out, [
    "Flag --old has been deprecated, use --new instead\n",
    "Flag --old has been deprecated, use --new instead\n",
  ]);
});

Deno.test("FlagSet.parse() reports --help/-h as HelpRequestedError when not registered", () => {
  const set = new FlagSet();
  assert.throws(() => set.parse(["--help"]), HelpRequestedError);
  assert.throws(() => set.parse(["-h"]), HelpRequestedError);
});

Deno.test("FlagSet.add() rejects duplicate names", () => {
  const { set } = newSet();
  assert.throws(
    () =>
      set.add({
        name: "port",
        usage: "",
        value: createValue("string", { get: () => "", set: () => {} }),
      }),
    /flag redefined: port/,
  );
});

Deno.test("FlagSet.parse() marks changed only on success", () => {
  const { set } = newSet();
  assert.throws(() => set.parse(["--port=x"]), FlagParseError);
  assert.equal(set.changed("port"), false);
});
