import assert from "node:assert/strict";
import { FlagSet } from "./flag_set.ts";
import { formatFlagUsages, formatHelp, KUBELET_LONG_HELP } from "./help.ts";
import { createValue, type ValueKind } from "./values.ts";

function add(
  set: FlagSet,
  name: string,
  kind: ValueKind,
  initial: unknown,
  extra: { usage?: string; shorthand?: string; deprecated?: string } = {},
) {
  let v = initial;
  set.add({
    name,
    usage: extra.usage ?? `about ${name}`,
    value: createValue(kind, { get: () => v, set: (x) => v = x }),
    ...(extra.shorthand ? { shorthand: extra.shorthand } : {}),
    ...(extra.deprecated ? { deprecated: extra.deprecated } : {}),
    ...(kind === "bool" ? { noOptDefVal: "true" } : {}),
  });
}

const sp = (n: number) => " ".repeat(n);

Deno.test("formatFlagUsages() sorts, aligns and adds defaults and deprecations like pflag", () => {
  const set = new FlagSet();
  add(set, "port", "int32", 10250);
  add(set, "v", "level", 0, { shorthand: "v" });
  add(set, "on", "bool", true, { deprecated: "gone soon" });
  add(set, "list", "stringSlice", ["pods"]);
  assert.equal(
    formatFlagUsages(set),
    "      --list strings" + sp(3) + "about list (default [pods])\n" +
      "      --on" + sp(13) +
      "about on (default true) (DEPRECATED: gone soon)\n" +
      "      --port int32" + sp(5) + "about port (default 10250)\n" +
      "  -v, --v Level" + sp(8) + "about v\n",
  );
});

Deno.test("formatFlagUsages() omits zero defaults and quotes string defaults", () => {
  const set = new FlagSet();
  add(set, "a", "string", "x");
  add(set, "b", "string", "");
  add(set, "c", "bool", false);
  add(set, "d", "int64", 0);
  add(set, "e", "duration", "0s");
  add(set, "f", "stringSlice", []);
  add(set, "g", "mapStringString", undefined);
  const lines = formatFlagUsages(set).split("\n");
  assert.match(lines[0] ?? "", /about a \(default "x"\)$/);
  for (const line of lines.slice(1, -1)) assert.doesNotMatch(line, /default/);
  assert.match(lines[3] ?? "", /--d int /);
  assert.match(lines[5] ?? "", /--f strings /);
});

Deno.test("formatFlagUsages() takes a back-quoted word as the value name and indents new lines", () => {
  const set = new FlagSet();
  add(set, "seccomp-default", "bool", false, {
    usage: "use the `RuntimeDefault` profile",
  });
  add(set, "multi", "string", "", { usage: "one\ntwo" });
  assert.equal(
    formatFlagUsages(set),
    "      --multi string" + sp(21) + "one\n" + sp(16) + "two\n" +
      "      --seccomp-default RuntimeDefault" + sp(3) +
      "use the RuntimeDefault profile\n",
  );
});

Deno.test("formatHelp() puts our description, usage line and flags together", () => {
  const set = new FlagSet();
  add(set, "port", "int32", 1);
  assert.equal(
    formatHelp(set),
    `${KUBELET_LONG_HELP}\n\nUsage:\n  kubelet [flags]\n\nFlags:\n      --port int32   about port (default 1)\n`,
  );
});
