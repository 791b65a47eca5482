/**
 * Negative probes, run by tests/ship/probes_test.ts under exactly the
 * permission lists `deno task compile` bakes. Each probe tries one thing the
 * kubelet must not be able to do and reports the error class it got; the
 * first probe is a positive control (reading the granted config file).
 *
 * Usage: deno run <lists> probe.ts <granted-file> <other-unix-socket>
 * Prints one JSON object: { "<probe>": "<Error name>" | "ok" }.
 * @module
 */
const [grantedFile = "", otherSocket = ""] = Deno.args;

async function attempt(fn: () => unknown): Promise<string> {
  try {
    const value = await fn();
    if (value && typeof value === "object" && "close" in value) {
      (value as { close(): void }).close();
    }
    return "ok";
  } catch (error) {
    return error instanceof Error ? error.name : String(error);
  }
}

const results: Record<string, string> = {
  controlReadGrantedFile: await attempt(() =>
    Deno.readTextFileSync(grantedFile)
  ),
  readEtcShadow: await attempt(() => Deno.readTextFileSync("/etc/shadow")),
  readProcSelfStatus: await attempt(() =>
    Deno.readTextFileSync("/proc/self/status")
  ),
  writeOutsideLists: await attempt(() =>
    Deno.writeTextFileSync("/tmp/kts-probe-escape", "x")
  ),
  connectOtherUnixSocket: await attempt(() =>
    Deno.connect({ transport: "unix", path: otherSocket })
  ),
  connectTcpOutsideList: await attempt(() =>
    Deno.connect({ hostname: "127.0.0.2", port: 1 })
  ),
  spawnShell: await attempt(() =>
    new Deno.Command("/bin/sh", { args: ["-c", "true"] }).outputSync()
  ),
  dlopenLibc: await attempt(() => Deno.dlopen("libc.so.6", {})),
  readEnvHome: await attempt(() => Deno.env.get("HOME")),
  sysUid: await attempt(() => Deno.uid()),
};
// deno-lint-ignore no-console
console.log(JSON.stringify(results));
