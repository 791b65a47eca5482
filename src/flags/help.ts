/**
 * `--help` text: pflag v1.0.6 `FlagUsagesWrapped(2)` layout over our flag
 * set, under our own description of the kubelet.
 * @module
 */
import { goQuote } from "../util/go_strconv.ts";
import type { Flag, FlagSet } from "./flag_set.ts";

/** Our description of the command, shown above the flags. */
export const KUBELET_LONG_HELP =
  `kubelet.ts is the node agent of a Kubernetes cluster, a TypeScript
implementation of the kubelet. It registers its node with the API server,
under the machine's hostname or the name given with --hostname-override.

Its unit of work is the PodSpec, a YAML or JSON description of a pod. The
kubelet receives PodSpecs, mostly from the API server, and makes sure the
containers they describe run and stay healthy. Containers that Kubernetes
did not create are left alone.

Besides the API server, pods can come from two local sources:

File: a file or directory of manifests named by --pod-manifest-path, re-read
every 20 seconds by default (--file-check-frequency).

HTTP endpoint: a URL named by --manifest-url, fetched every 20 seconds by
default (--http-check-frequency).`;

function isZeroDefault(flag: Flag): boolean {
  switch (flag.value.zero) {
    case "bool":
      return flag.defValue === "false";
    case "duration":
      return flag.defValue === "0" || flag.defValue === "0s";
    case "number":
      return flag.defValue === "0";
    case "string":
      return flag.defValue === "";
    case "slice":
      return flag.defValue === "[]";
    case "custom":
      // pflag looks at the current value; unchanged, that is the default.
      return ["false", "<nil>", "", "0"].includes(
        flag.changed ? flag.value.text() : flag.defValue,
      );
  }
}

const TYPE_NAMES: Record<string, string> = {
  bool: "",
  float64: "float",
  int64: "int",
  uint64: "uint",
  stringSlice: "strings",
};

/** pflag `UnquoteUsage`: a back-quoted word names the value, else the type does. */
export function unquoteUsage(flag: Flag): { varname: string; usage: string } {
  const start = flag.usage.indexOf("`");
  if (start >= 0) {
    const end = flag.usage.indexOf("`", start + 1);
    if (end >= 0) {
      const varname = flag.usage.slice(start + 1, end);
      return {
        varname,
        usage: flag.usage.slice(0, start) + varname + flag.usage.slice(end + 1),
      };
    }
  }
  const type = flag.value.type;
  return { varname: TYPE_NAMES[type] ?? type, usage: flag.usage };
}

/** The flag table of `--help` (sorted, aligned, embedded newlines indented). */
export function formatFlagUsages(flagSet: FlagSet): string {
  const lines: [string, string][] = [];
  let maxLen = 0;
  for (const flag of flagSet.flags()) {
    let left = flag.shorthand !== undefined
      ? `  -${flag.shorthand}, --${flag.name}`
      : `      --${flag.name}`;
    const { varname, usage } = unquoteUsage(flag);
    if (varname !== "") left += " " + varname;
    const noOpt = flag.noOptDefVal ?? "";
    if (noOpt !== "") {
      if (flag.value.type === "string") left += `[="${noOpt}"]`;
      else if (flag.value.type !== "bool" || noOpt !== "true") {
        left += `[=${noOpt}]`;
      }
    }
    maxLen = Math.max(maxLen, left.length + 1);
    let right = usage;
    if (!isZeroDefault(flag)) {
      right += flag.value.type === "string"
        ? ` (default ${goQuote(flag.defValue)})`
        : ` (default ${flag.defValue})`;
    }
    if (flag.deprecated) right += ` (DEPRECATED: ${flag.deprecated})`;
    lines.push([left, right]);
  }
  const indent = "\n" + " ".repeat(16);
  return lines.map(([left, right]) =>
    `${left} ${" ".repeat(maxLen - left.length)} ${
      right.replaceAll("\n", indent)
    }\n`
  ).join("");
}

/** The whole `--help` output. */
export function formatHelp(flagSet: FlagSet): string {
  return `${KUBELET_LONG_HELP}\n\nUsage:\n  kubelet [flags]\n\nFlags:\n${
    formatFlagUsages(flagSet)
  }`;
}
