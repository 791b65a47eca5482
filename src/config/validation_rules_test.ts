/**
 * Check-by-check cases beyond upstream's TestValidateKubeletConfiguration
 * table (that one is `validation_test.ts`): reserved memory (upstream
 * validation_reserved_memory_test.go), the logging, tracing, metrics and
 * OS-specific validators, taints and image patterns, the aggregate text,
 * locked gates, and boundaries pinned by docs/testing.md.
 */
import assert from "node:assert/strict";
import { createFeatureGates } from "../features/mod.ts";
import {
  defaultKubeletConfiguration,
  formatValidationIssues,
  type KubeletConfiguration,
  validateKubeletConfiguration,
} from "./mod.ts";

const LINUX_V2 = { os: "linux", cgroupVersion: 2 } as const;

function issuesFor(
  mutate: (c: KubeletConfiguration) => void,
  options: Parameters<typeof validateKubeletConfiguration>[2] = LINUX_V2,
) {
  const c = defaultKubeletConfiguration();
  mutate(c);
  return validateKubeletConfiguration(c, createFeatureGates(), options);
}

Deno.test("validateKubeletConfiguration() accepts the default configuration", () => {
  assert.deepEqual(issuesFor(() => {}), []);
});

Deno.test("validateKubeletConfiguration() reserved memory cases (validation_reserved_memory_test)", () => {
  const cases: Array<
    [KubeletConfiguration["reservedMemory"], string | undefined]
  > = [
    [undefined, undefined],
    [[{ numaNode: 0, limits: { memory: "128" } }], undefined],
    [
      [{ numaNode: 0, limits: { memory: "128" } }, {
        numaNode: 0,
        limits: { memory: "64" },
      }],
      'invalid configuration: the reserved memory has a duplicate value for NUMA node 0 and resource "memory"',
    ],
    [
      [{ numaNode: 0, limits: { blabla: "128" } }],
      'invalid configuration: the limit type "blabla" for NUMA node 0 is not supported, only [memory hugepages-<HugePageSize>] is accepted',
    ],
    [
      [{ numaNode: 0, limits: { memory: "0" } }],
      'invalid configuration: reserved memory may not be zero for NUMA node 0 and resource "memory"',
    ],
  ];
  for (const [reserved, expected] of cases) {
    const issues = issuesFor((c) => {
      if (reserved) c.reservedMemory = reserved;
    });
    assert.equal(issues[0]?.message, expected);
    if (expected) assert.equal(issues[0]?.field, "reservedMemory");
  }
  const hugepages = issuesFor((c) => {
    c.reservedMemory = [{ numaNode: 1, limits: { "hugepages-2Mi": "1Gi" } }];
  });
  assert.deepEqual(hugepages, []);
});

Deno.test("validateKubeletConfiguration() checks logging options and vmodule", () => {
  const issues = issuesFor((c) => {
    c.logging.format = "json";
    c.logging.vmodule = [{ filePattern: "", verbosity: 1 }, {
      filePattern: "a=b",
      verbosity: 2,
    }];
    c.logging.options.text.splitStream = true;
    c.logging.options.json.infoBufferSize = "1Mi";
  });
  assert.deepEqual(issues.map((i) => i.message), [
    "logging.vmodule: Forbidden: Only supported for text log format",
    "logging.vmodule[0]: Required value: File pattern must not be empty",
    'logging.vmodule[1]: Invalid value: "a=b": File pattern must not contain equal sign or comma',
    "logging.options.text.splitStream: Forbidden: Feature LoggingAlphaOptions is disabled",
    "logging.options.json.infoBufferSize: Forbidden: Feature LoggingAlphaOptions is disabled",
  ]);
  const gated = issuesFor((c) => {
    c.logging.format = "json";
    c.featureGates = { LoggingBetaOptions: false };
  });
  assert.deepEqual(gated.map((i) => i.message), [
    "logging.format: Forbidden: Log format json is disabled, see LoggingBetaOptions feature",
  ]);
  assert.deepEqual(
    issuesFor((c) => {
      c.logging.options.text.splitStream = true;
      c.featureGates = { LoggingAlphaOptions: true };
    }),
    [],
  );
});

Deno.test("validateKubeletConfiguration() checks tracing rate and endpoint scheme", () => {
  assert.deepEqual(
    issuesFor((c) => (c.tracing = { samplingRatePerMillion: 1000001 })).map((
      i,
    ) => i.message),
    [
      "tracing.samplingRatePerMillion: Invalid value: 1000001: sampling rate per million must be less than or equal to one million",
    ],
  );
  assert.deepEqual(
    issuesFor((c) => (c.tracing = { endpoint: "localhost:4317" })),
    [],
  );
  assert.deepEqual(
    issuesFor((c) => (c.tracing = { endpoint: "unix:///run/otel.sock" })),
    [],
  );
  const https = issuesFor((
    c,
  ) => (c.tracing = { endpoint: "https://collector:4317" }));
  assert.equal(
    https[0]?.message,
    'tracing.endpoint: Invalid value: "https://collector:4317": unsupported scheme: https.  Options are none, dns, unix, or unix-abstract.  See https://github.com/grpc/grpc/blob/master/doc/naming.md',
  );
});

Deno.test("validateKubeletConfiguration() applies the OS-specific checks with at most one issue", () => {
  const v1 = { os: "linux", cgroupVersion: 1 } as const;
  assert.deepEqual(
    issuesFor((c) => {
      c.failCgroupV1 = true;
      c.singleProcessOOMKill = false;
    }, v1).map((i) => i.message),
    ["kubelet is configured to not run on a host using cgroup v1. cgroup v1 support is in maintenance mode"],
  );
  assert.deepEqual(
    issuesFor((c) => (c.singleProcessOOMKill = false), v1).map((i) => i.field),
    [
      "singleProcessOOMKill",
    ],
  );
  const ids = (n: number) =>
    issuesFor((c) => (c.userNamespaces = { idsPerPod: n })).map((i) =>
      i.message
    );
  assert.deepEqual(ids(65536), []);
  assert.deepEqual(ids(1000), [
    "invalid configuration: userNamespaces.idsPerPod must not be less than 65536",
  ]);
  assert.deepEqual(ids(65537), [
    "invalid configuration: userNamespaces.idsPerPod must be a multiple of 65536",
  ]);
  assert.deepEqual(ids(65536 * 65537), [
    "invalid configuration: userNamespaces.idsPerPod must not be more than 4294967295",
  ]);
  assert.deepEqual(
    issuesFor((c) => (c.singleProcessOOMKill = true), { os: "windows" }).map((
      i,
    ) => i.message),
    ["invalid configuration: singleProcessOOMKill is not supported on Windows"],
  );
  assert.deepEqual(
    issuesFor((c) => (c.userNamespaces = {}), { os: "darwin" }).map((i) =>
      i.message
    ),
    ["invalid configuration: userNamespaces is only supported on linux"],
  );
});

Deno.test("validateKubeletConfiguration() checks showHiddenMetricsForVersion, taints and image patterns", () => {
  assert.deepEqual(
    issuesFor((c) => (c.showHiddenMetricsForVersion = "1.33")),
    [],
  );
  assert.deepEqual(
    issuesFor((c) => (c.showHiddenMetricsForVersion = "1.32")).map((i) =>
      i.message
    ),
    [
      "--show-hidden-metrics-for-version must be omitted or have the value '1.33'. Only the previous minor version is allowed",
    ],
  );
  assert.deepEqual(
    issuesFor((
      c,
    ) => (c.registerWithTaints = [{
      key: "a/b",
      value: "v",
      effect: "NoSchedule",
    }])),
    [],
  );
  assert.deepEqual(
    issuesFor((
      c,
    ) => (c.registerWithTaints = [{
      key: "k",
      value: "v",
      effect: "Sometimes",
    }])).map((i) => i.message),
    ["invalid taint: {k v Sometimes <nil>}"],
  );
  const pattern = (p: string) =>
    issuesFor((c) => {
      c.featureGates = { KubeletEnsureSecretPulledImages: true };
      c.imagePullCredentialsVerificationPolicy = "NeverVerifyAllowlistedImages";
      c.preloadedImagesVerificationAllowlist = [p];
    }).map((i) => i.message.replace(/^.*allowlist`: /i, ""));
  assert.deepEqual(pattern("registry.k8s.io/pause"), []);
  assert.deepEqual(pattern("registry.k8s.io/*"), []);
  assert.deepEqual(pattern(" registry.k8s.io/pause"), [
    "leading/trailing spaces are not allowed:  registry.k8s.io/pause",
  ]);
  assert.deepEqual(pattern("registry.k8s.io/pa*se"), [
    "not a valid wildcard pattern, only patterns ending with '/*' are allowed: registry.k8s.io/pa*se",
  ]);
  assert.deepEqual(pattern("pause"), [
    "at least registry hostname is required",
  ]);
  assert.deepEqual(pattern("registry.k8s.io/pause:3.10"), [
    "neither tag nor digest is accepted in an image reference: registry.k8s.io/pause:3.10",
  ]);
});

Deno.test("formatValidationIssues() aggregates like utilerrors.NewAggregate", () => {
  assert.equal(formatValidationIssues([]), "");
  assert.equal(formatValidationIssues([{ field: "a", message: "x" }]), "x");
  assert.equal(
    formatValidationIssues([{ field: "a", message: "x" }, {
      field: "b",
      message: "x",
    }]),
    "x",
  );
  assert.equal(
    formatValidationIssues([
      { field: "a", message: "x" },
      { field: "b", message: "y" },
      { field: "c", message: "x" },
    ]),
    "[x, y]",
  );
});

Deno.test("validateKubeletConfiguration() reports a locked gate alone", () => {
  const issues = issuesFor((c) => {
    c.featureGates = { NodeSwap: false };
    c.port = 0;
  });
  assert.deepEqual(issues, [{
    field: "featureGates",
    message:
      "cannot set feature gate NodeSwap to false, feature is locked to true",
  }]);
});

Deno.test("validateKubeletConfiguration() rejects imageMaximumGCAge equal to imageMinimumGCAge", () => {
  // upstream ValidateKubeletConfiguration: the maximum age must be strictly greater
  const equal = issuesFor((c) => {
    c.featureGates = { ImageMaximumGCAge: true };
    c.imageMinimumGCAge = "2m0s";
    c.imageMaximumGCAge = "120s";
  });
  assert.deepEqual(equal.map((i) => i.field), ["imageMaximumGCAge"]);
  assert.match(
    formatValidationIssues(equal),
    /imageMaximumGCAge 2m0s must be greater than imageMinimumGCAge 2m0s/,
  );
  const greater = issuesFor((c) => {
    c.featureGates = { ImageMaximumGCAge: true };
    c.imageMinimumGCAge = "2m0s";
    c.imageMaximumGCAge = "2m0.000000001s";
  });
  assert.deepEqual(greater, []);
});

Deno.test("validateKubeletConfiguration() accepts healthzPort 0 (no healthz listener) and rejects -1", () => {
  assert.deepEqual(issuesFor((c) => c.healthzPort = 0), []);
  const negative = issuesFor((c) => c.healthzPort = -1);
  assert.deepEqual(negative.map((i) => i.field), ["healthzPort"]);
  assert.match(
    formatValidationIssues(negative),
    /healthzPort \(--healthz-port\) -1 must be between 1 and 65535, inclusive/,
  );
});
