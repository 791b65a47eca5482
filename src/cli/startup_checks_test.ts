import assert from "node:assert/strict";
import { runCommand } from "./run_command.ts";
import {
  evictionProblems,
  nodeIPProblems,
  reservedProblems,
} from "./startup_checks.ts";

const QUANTITY =
  "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";

const evictionCases: {
  name: string;
  config: Parameters<typeof evictionProblems>[0];
  want: string[];
}[] = [
  {
    name:
      "accepts quantities, percentages and soft thresholds with a grace period",
    config: {
      evictionHard: { "memory.available": "100Mi", "nodefs.available": "10%" },
      evictionSoft: { "imagefs.available": "15.5%" },
      evictionSoftGracePeriod: { "imagefs.available": "1m30s" },
      evictionMinimumReclaim: { "nodefs.available": "500Mi" },
    },
    want: [],
  },
  {
    name: "rejects a value that is neither a quantity nor a percentage",
    config: { evictionHard: { "memory.available": "lots" } },
    want: [`evictionHard: ${QUANTITY}`],
  },
  {
    name: "rejects a bad percentage with strconv's wording",
    config: { evictionHard: { "nodefs.available": "ten%" } },
    want: [
      'evictionHard: strconv.ParseFloat: parsing "ten": invalid syntax',
    ],
  },
  {
    name: "rejects percentages over 100",
    config: { evictionSoft: { "nodefs.available": "120%" } },
    want: [
      "evictionSoft: eviction percentage threshold nodefs.available must be <= 100%: 120%",
    ],
  },
  {
    name: "rejects a zero quantity",
    config: { evictionHard: { "pid.available": "0" } },
    want: [
      "evictionHard: eviction threshold pid.available must be positive: 0",
    ],
  },
  {
    name: "rejects unknown signals",
    config: { evictionHard: { "cpu.available": "1" } },
    want: ["evictionHard: unsupported eviction signal cpu.available"],
  },
  {
    name: "ignores 0% and 100%",
    config: { evictionHard: { "imagefs.available": "0%" } },
    want: [],
  },
  {
    name: "requires a grace period for each soft threshold",
    config: { evictionSoft: { "memory.available": "1Gi" } },
    want: [
      "evictionSoft: grace period must be specified for the soft eviction threshold memory.available",
    ],
  },
  {
    name: "rejects bad grace periods and negative reclaims",
    config: {
      evictionSoftGracePeriod: { "memory.available": "soon" },
      evictionMinimumReclaim: { "memory.available": "-1Gi" },
    },
    want: [
      'evictionSoftGracePeriod: time: invalid duration "soon"',
      "evictionMinimumReclaim: negative eviction minimum reclaim specified for memory.available",
    ],
  },
];

for (const c of evictionCases) {
  Deno.test(`evictionProblems() ${c.name}`, () => {
    assert.deepEqual(evictionProblems(c.config), c.want);
  });
}

Deno.test("reservedProblems() parses kubeReserved and systemReserved like upstream parseResourceList", () => {
  assert.deepEqual(
    reservedProblems({
      kubeReserved: { cpu: "100m", memory: "1Gi", pid: "100" },
    }),
    [],
  );
  assert.deepEqual(reservedProblems({ kubeReserved: { cpu: "lots" } }), [
    `kubeReserved: --kube-reserved value failed to parse: failed to parse quantity "lots" for "cpu" resource: ${QUANTITY}`,
  ]);
  assert.deepEqual(reservedProblems({ systemReserved: { gpu: "1" } }), [
    'systemReserved: --system-reserved value failed to parse: cannot reserve "gpu" resource',
  ]);
  assert.deepEqual(reservedProblems({ systemReserved: { memory: "-1Gi" } }), [
    'systemReserved: --system-reserved value failed to parse: resource quantity for "memory" cannot be negative: -1Gi',
  ]);
});

Deno.test("nodeIPProblems() follows upstream ParseNodeIPArgument", () => {
  const check = (nodeIP: string, cloudProvider = "") =>
    nodeIPProblems({ nodeIP, cloudProvider });
  assert.deepEqual(check(""), []);
  assert.deepEqual(check("10.0.0.1"), []);
  assert.deepEqual(check("10.0.0.1,fd00::1"), []);
  assert.deepEqual(check("not-an-ip"), [], "unparsable entries are ignored");
  assert.deepEqual(check("10.0.0.1,10.0.0.2"), [
    'nodeIP: bad --node-ip "10.0.0.1,10.0.0.2": must contain either a single IP or a dual-stack pair of IPs',
  ]);
  assert.deepEqual(check("0.0.0.0,fd00::1"), [
    `nodeIP: bad --node-ip "0.0.0.0,fd00::1": dual-stack node IP cannot include '0.0.0.0' or '::'`,
  ]);
  assert.deepEqual(check("10.0.0.1,fd00::1", "gce"), [
    'nodeIP: bad --node-ip "10.0.0.1,fd00::1": dual-stack not supported in this configuration',
  ]);
});

async function dryRun(argv: string[], config?: string) {
  let stderr = "";
  let dir: string | undefined;
  if (config) {
    dir = await Deno.makeTempDir();
    await Deno.writeTextFile(`${dir}/config.yaml`, config);
    argv = [...argv, `--config=${dir}/config.yaml`];
  }
  try {
    const code = await runCommand(["--dry-run", ...argv], {
      stdout: () => {},
      stderr: (s) => stderr += s,
      signal: new AbortController().signal,
    });
    return { code, stderr };
  } finally {
    if (dir) await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("runCommand() --dry-run rejects start-up values upstream cannot parse, naming the field", async () => {
  const { code, stderr } = await dryRun(
    ["--node-ip=10.0.0.1,10.0.0.2", "--node-labels=kubernetes.io/foo=bar"],
    [
      "apiVersion: kubelet.config.k8s.io/v1beta1",
      "kind: KubeletConfiguration",
      "evictionHard:",
      "  memory.available: lots",
      "reservedSystemCPUs: a-b",
      "registerWithTaints:",
      "- key: foo",
      "  effect: Bogus",
      "",
    ].join("\n"),
  );
  assert.equal(code, 1);
  for (
    const want of [
      `failed to run Kubelet: evictionHard: ${QUANTITY}`,
      'failed to run Kubelet: nodeIP: bad --node-ip \\"10.0.0.1,10.0.0.2\\": must contain either a single IP or a dual-stack pair of IPs',
      "unable to parse reservedSystemCPUs (--reserved-cpus) a-b",
      "invalid taint: {foo  Bogus <nil>}",
      "unknown 'kubernetes.io' or 'k8s.io' labels specified with --node-labels: [kubernetes.io/foo]",
    ]
  ) {
    assert.ok(stderr.includes(want), `missing ${want} in ${stderr}`);
  }
});

Deno.test("runCommand() fails a start on a bad eviction threshold before starting", async () => {
  let started = false;
  let stderr = "";
  const code = await runCommand(["--eviction-hard=memory.available<lots"], {
    stdout: () => {},
    stderr: (s) => stderr += s,
    signal: new AbortController().signal,
    start: () => {
      started = true;
      return Promise.resolve(0);
    },
  });
  assert.equal(code, 1);
  assert.equal(started, false);
  assert.ok(
    stderr.includes(`failed to run Kubelet: evictionHard: ${QUANTITY}`),
    stderr,
  );
});
