import assert from "node:assert/strict";
import { readYaml } from "../util/yaml.ts";
import { applyKubeletConfigurationDefaults } from "../config/mod.ts";
import {
  createKubeletFlagSet,
  defaultKubeletFlags,
  FLAG_SPECS,
} from "../flags/mod.ts";
import { flagsModeConfiguration } from "./resolve_config.ts";
import {
  type CommandDeps,
  runCommand,
  type StartContext,
} from "./run_command.ts";
import { GIT_VERSION } from "./version.ts";

interface Run {
  code: number;
  stdout: string;
  stderr: string;
  started: StartContext[];
}

async function run(
  argv: string[],
  extra: Partial<CommandDeps> = {},
): Promise<Run> {
  let stdout = "";
  let stderr = "";
  const started: StartContext[] = [];
  const controller = new AbortController();
  const code = await runCommand(argv, {
    stdout: (s) => stdout += s,
    stderr: (s) => stderr += s,
    signal: controller.signal,
    start: (ctx) => {
      started.push(ctx);
      return Promise.resolve(0);
    },
    ...extra,
  });
  return { code, stdout, stderr, started };
}

function commandFailed(stderr: string): string {
  const lines = stderr.trimEnd().split("\n").filter((l) =>
    l.includes('"command failed"')
  );
  assert.equal(lines.length, 1, stderr);
  const match = /"command failed" err=(".*")$/.exec(lines[0] ?? "");
  assert.ok(match, lines[0]);
  return JSON.parse(match[1] ?? '""');
}

Deno.test("runCommand() --help prints our help on stdout and exits 0", async () => {
  const r = await run(["--help"]);
  assert.equal(r.code, 0);
  assert.match(r.stdout, /^kubelet.ts is the node agent/);
  assert.match(r.stdout, /\n\nUsage:\n {2}kubelet \[flags\]\n\nFlags:\n/);
  for (const spec of FLAG_SPECS) {
    assert.ok(r.stdout.includes(`--${spec.name}`), spec.name);
  }
  assert.match(r.stdout, /\n {2}-h, --help +help for kubelet\n/);
  assert.match(r.stdout, /\n {2}-v, --v Level +Log verbosity/);
  assert.match(r.stdout, /--version version\[=true\] /);
  assert.match(r.stdout, /--seccomp-default RuntimeDefault /);
  assert.match(
    r.stdout,
    /--authorization-mode string .*\(default "AlwaysAllow"\)/,
  );
  assert.match(r.stdout, /--read-only-port int32 .*\(default 10255\)/);
  assert.match(r.stdout, /--pod-max-pids int .*\(default -1\)/);
  assert.match(
    r.stdout,
    /\n {16}MemoryQoS=true\|false \(ALPHA - default=false\)\n/,
  );
  assert.equal(r.stderr, "");
  assert.equal(r.started.length, 0);
});

Deno.test("runCommand() -h beats --version and -h works as a shorthand", async () => {
  for (const argv of [["-h"], ["--help", "--version"], ["--version", "-h"]]) {
    const r = await run(argv);
    assert.equal(r.code, 0);
    assert.match(r.stdout, /^kubelet.ts is the node agent/, argv.join(" "));
  }
});

Deno.test("runCommand() --version prints the version and exits 0", async () => {
  assert.deepEqual(
    (await run(["--version"])).stdout,
    `Kubernetes ${GIT_VERSION}\n`,
  );
  assert.deepEqual(
    (await run(["--version=true"])).stdout,
    `Kubernetes ${GIT_VERSION}\n`,
  );
  const raw = await run(["--version=raw"]);
  assert.equal(raw.code, 0);
  assert.match(
    raw.stdout,
    /^version\.Info\{Major:"1", Minor:"34", EmulationMajor:"", /,
  );
  assert.ok(raw.stdout.includes(`GitVersion:"${GIT_VERSION}"`));
  const dynamic = await run(["--version=v1.34.0-custom", "--version"]);
  assert.equal(dynamic.stdout, "Kubernetes v1.34.0-custom\n");
});

Deno.test("runCommand() --version=false or a dynamic version does not exit", async () => {
  const r = await run(["--version=false"]);
  assert.equal(r.code, 0);
  assert.equal(r.started.length, 1);
  const d = await run(["--version=v1.34.0-x"]);
  assert.equal(d.started[0]?.flags.reportedVersion, "v1.34.0-x");
  const bad = await run(["--version=v1.35.0"]);
  assert.equal(bad.code, 1);
  assert.equal(
    commandFailed(bad.stderr),
    `failed to parse kubelet flag: invalid argument "v1.35.0" for "--version" flag: version "v1.35.0" must match major/minor/patch of default version "${GIT_VERSION}"`,
  );
});

Deno.test("runCommand() logs parse errors as one 'command failed' line, exit 1", async () => {
  const cases: [string[], string][] = [
    [["--foo"], "failed to parse kubelet flag: unknown flag: --foo"],
    [["run"], "unknown command run"],
    [["--fail-swap-on", "false"], "unknown command false"],
    [["a", "--foo"], "failed to parse kubelet flag: unknown flag: --foo"],
    [["-x"], "failed to parse kubelet flag: unknown shorthand flag: 'x' in -x"],
    [
      ["--port"],
      "failed to parse kubelet flag: flag needs an argument: --port",
    ],
    [
      ["--max-pods=lots"],
      'failed to parse kubelet flag: invalid argument "lots" for "--max-pods" flag: strconv.ParseInt: parsing "lots": invalid syntax',
    ],
    [
      ["--feature-gates=NoSuchGate=true"],
      "failed to set feature gates from initial flags-based config: unrecognized feature gate: NoSuchGate",
    ],
    [
      ["--feature-gates=NodeSwap=false"],
      "failed to set feature gates from initial flags-based config: cannot set feature gate NodeSwap to false, feature is locked to true",
    ],
  ];
  for (const [argv, message] of cases) {
    const r = await run(argv);
    assert.equal(r.code, 1, argv.join(" "));
    assert.equal(commandFailed(r.stderr), message);
    assert.doesNotMatch(r.stderr, /\n\s+at /, "no stack trace");
    assert.equal(r.started.length, 0);
  }
});

Deno.test("runCommand() prints deprecation notices for deprecated flags", async () => {
  const r = await run([
    "--port=1",
    "--sync-frequency=2m",
    "-v=0",
    "--provider-id=x",
  ]);
  assert.equal(r.code, 0);
  const notices = r.stderr.split("\n").filter((l) => l.startsWith("Flag --"));
  assert.equal(notices.length, 2);
  assert.match(
    notices[0] ?? "",
    /^Flag --port has been deprecated, This parameter should be set via the config file/,
  );
  assert.equal(r.started[0]?.config.port, 1);
  assert.equal(r.started[0]?.config.syncFrequency, "2m0s");
  assert.equal(r.started[0]?.config.providerID, "x");
});

Deno.test("runCommand() passes flags-mode config, KubeletFlags and gates to start()", async () => {
  const r = await run([
    "--kubeconfig=/k",
    "--node_labels=a=b",
    "--node-labels=c=d",
    "--root-dir=/r",
    "--feature-gates=MemoryQoS=true",
    "--cluster-dns=10.0.0.1",
    "--cluster-dns=10.0.0.2,10.0.0.3",
  ]);
  assert.equal(r.code, 0, r.stderr);
  const ctx = r.started[0];
  assert.ok(ctx);
  assert.equal(ctx.flags.kubeconfig, "/k");
  assert.equal(ctx.flags.rootDir, "/r");
  assert.deepEqual(ctx.flags.nodeLabels, { a: "b", c: "d" });
  assert.equal(ctx.featureGates.enabled("MemoryQoS"), true);
  assert.deepEqual(ctx.config.clusterDNS, ["10.0.0.1", "10.0.0.2", "10.0.0.3"]);
  assert.equal(ctx.config.readOnlyPort, 10255);
  assert.equal(ctx.config.authorization?.mode, "AlwaysAllow");
  assert.equal(ctx.config.authentication?.anonymous?.enabled, true);
  assert.equal(ctx.config.authentication?.webhook?.enabled, false);
  assert.equal(ctx.config.evictionHard, undefined);
  assert.equal(ctx.signal.aborted, false);
});

Deno.test("runCommand() reports start() failures and returns start()'s status", async () => {
  const failing = await run([], {
    start: () => Promise.reject(new Error("boom")),
  });
  assert.equal(failing.code, 1);
  assert.equal(commandFailed(failing.stderr), "failed to run Kubelet: boom");
  const three = await run([], { start: () => Promise.resolve(3) });
  assert.equal(three.code, 3);
});

Deno.test("runCommand() --pod-infra-container-image logs that it is ignored", async () => {
  const r = await run(["--pod-infra-container-image=pause:3.10"]);
  assert.equal(r.code, 0);
  assert.match(
    r.stderr,
    /Flag --pod-infra-container-image has been deprecated, will be removed in 1.35/,
  );
  assert.match(
    r.stderr,
    /--pod-infra-container-image will not be pruned by the image garbage collector/,
  );
});

Deno.test("runCommand() rejects unknown kubernetes.io node labels", async () => {
  const r = await run([
    "--node-labels=beta.kubernetes.io/metadata-proxy-ready=true",
  ]);
  assert.equal(r.code, 1);
  assert.match(
    commandFailed(r.stderr),
    /^failed to validate kubelet flags: unknown 'kubernetes.io' or 'k8s.io' labels specified with --node-labels: \[beta.kubernetes.io\/metadata-proxy-ready\]\n/,
  );
});

Deno.test("runCommand() --dry-run prints YAML that round-trips to the same config", async () => {
  const r = await run([
    "--dry-run",
    "--port=8081",
    "--system-reserved=cpu=200m,memory=1Gi",
    "--eviction-hard=memory.available<5%",
    "--register-with-taints=dedicated=infra:NoSchedule",
    "--reserved-memory=0:memory=1Gi",
    "--manifest-url-header=a:b",
    "--vmodule=x=2",
  ]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.started.length, 0);
  const doc = (await readYaml(r.stdout)).value as Record<string, unknown>;
  assert.equal(doc.apiVersion, "kubelet.config.k8s.io/v1beta1");
  assert.equal(doc.kind, "KubeletConfiguration");
  assert.equal(doc.port, 8081);
  assert.equal(doc.readOnlyPort, 10255);
  assert.deepEqual(doc.systemReserved, { cpu: "200m", memory: "1Gi" });
  assert.deepEqual(doc.evictionHard, { "memory.available": "5%" });
  assert.deepEqual(doc.registerWithTaints, [{
    key: "dedicated",
    value: "infra",
    effect: "NoSchedule",
  }]);
  assert.deepEqual(doc.reservedMemory, [{
    numaNode: 0,
    limits: { memory: "1Gi" },
  }]);
  assert.deepEqual(doc.staticPodURLHeader, { a: ["b"] });
  const expected = await flagsModeConfiguration() as unknown as Record<
    string,
    unknown
  >;
  for (const key of Object.keys(expected)) {
    assert.ok(key in doc, `field ${key} printed`);
  }
  const again = await applyKubeletConfigurationDefaults(doc);
  assert.deepEqual(
    (await readYaml(r.stdout)).value,
    JSON.parse(JSON.stringify(again)),
  );
});

Deno.test("runCommand() --dry-run appends the permission plan as comments", async () => {
  const r = await run(["--dry-run"], {
    permissions: {
      flagsFor: (ctx) => [`--allow-read=${ctx.flags.rootDir}`, "--allow-net"],
      check: () => Promise.resolve(["should not be called"]),
    },
  });
  assert.equal(r.code, 0);
  assert.match(
    r.stdout,
    /\n# deno permission: --allow-read=\/var\/lib\/kubelet\n# deno permission: --allow-net\n$/,
  );
});

Deno.test("runCommand() refuses to start without the needed permissions", async () => {
  const r = await run([], {
    permissions: {
      flagsFor: () => [],
      check: () => Promise.resolve(["missing --allow-read=/var/lib/kubelet"]),
    },
  });
  assert.equal(r.code, 1);
  assert.equal(r.started.length, 0);
  assert.equal(
    commandFailed(r.stderr),
    "insufficient Deno permissions: missing --allow-read=/var/lib/kubelet",
  );
});

Deno.test("runCommand() -v 1 logs every flag value", async () => {
  const r = await run(["-v", "1", "--port=7"]);
  assert.equal(r.code, 0);
  assert.match(r.stderr, /"FLAG: --port=\\"7\\""/);
  assert.match(r.stderr, /"FLAG: --v=\\"1\\""/);
  const quiet = await run(["--port=7"]);
  assert.doesNotMatch(quiet.stderr, /FLAG: /);
});

Deno.test("flag table defaults match the flags-mode configuration", async () => {
  const config = await flagsModeConfiguration() as unknown as Record<
    string,
    unknown
  >;
  const set = createKubeletFlagSet({
    config,
    flags: defaultKubeletFlags(GIT_VERSION),
    buildVersion: GIT_VERSION,
  });
  for (const spec of FLAG_SPECS) {
    assert.equal(set.flagSet.lookup(spec.name)?.defValue, spec.def, spec.name);
  }
});

Deno.test("runCommand() fails validation with upstream wrapping and no start()", async () => {
  const r = await run(["--runonce"]);
  assert.equal(r.code, 1);
  assert.equal(r.started.length, 0);
  assert.equal(
    commandFailed(r.stderr),
    "failed to validate kubelet configuration, error: invalid configuration: runOnce (--runOnce) true, Runonce mode has been deprecated and should not be set, path: &TypeMeta{Kind:,APIVersion:,}",
  );
  const logging = await run(["--logging-format=foo", "--runonce"]);
  assert.equal(
    commandFailed(logging.stderr),
    'initialize logging: logging.format: Invalid value: "foo": Unsupported log format',
  );
});

Deno.test("runCommand() --dry-run reports every problem at once, exit 1, no YAML", async () => {
  const r = await run([
    "--dry-run",
    "--logging-format=foo",
    "--runonce",
    "--image-gc-high-threshold=10",
    "--node-labels=kubernetes.io/x=y",
  ]);
  assert.equal(r.code, 1);
  assert.equal(r.stdout, "");
  const err = commandFailed(r.stderr);
  assert.ok(
    err.startsWith(
      "[failed to validate kubelet flags: unknown 'kubernetes.io' or 'k8s.io' labels",
    ),
    err,
  );
  assert.ok(
    err.includes(
      ', initialize logging: logging.format: Invalid value: "foo": Unsupported log format, ',
    ),
  );
  assert.ok(err.includes("runOnce (--runOnce) true"));
  assert.ok(
    err.includes(
      "imageGCLowThresholdPercent (--image-gc-low-threshold) 80 must be less than",
    ),
  );
  assert.ok(err.endsWith(", path: &TypeMeta{Kind:,APIVersion:,}]"));
});

Deno.test("runCommand() JSON logging applies after the config is resolved", async () => {
  const r = await run([
    "--logging-format=json",
    "--pod-infra-container-image=x",
    "--foo",
  ]);
  assert.equal(r.code, 1);
  assert.match(
    r.stderr,
    /^E\d{4} .*"command failed"/m,
    "parse errors still use the initial text logger",
  );
  const ok = await run(["--logging-format=json", "-v=1"]);
  assert.equal(ok.code, 0);
  const flagLine = ok.stderr.split("\n").find((l) =>
    l.includes("FLAG: --port=")
  );
  assert.ok(flagLine);
  assert.equal(JSON.parse(flagLine).msg, 'FLAG: --port="10250"');
});
