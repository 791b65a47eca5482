import assert from "node:assert/strict";
import {
  CADVISOR_FLAG_DEPRECATION,
  CONFIG_FLAG_DEPRECATION,
  FLAG_SPECS,
  UNDEPRECATED_CONFIG_FLAGS,
} from "./flag_specs.ts";
import { defaultKubeletFlags } from "./kubelet_flags.ts";

const upstream = FLAG_SPECS.filter((s) => !s.extension);

Deno.test("FLAG_SPECS has the 151 upstream Linux flags plus our --dry-run", () => {
  assert.equal(upstream.length, 151);
  assert.equal(upstream.filter((s) => s.group === "cli").length, 22);
  assert.equal(upstream.filter((s) => s.group === "config").length, 107);
  assert.equal(upstream.filter((s) => s.group === "global").length, 22);
  assert.deepEqual(FLAG_SPECS.filter((s) => s.extension).map((s) => s.name), [
    "dry-run",
  ]);
  assert.equal(new Set(FLAG_SPECS.map((s) => s.name)).size, FLAG_SPECS.length);
});

Deno.test("FLAG_SPECS deprecations follow upstream", () => {
  const config = FLAG_SPECS.filter((s) => s.group === "config");
  assert.equal(
    config.filter((s) => s.deprecated === CONFIG_FLAG_DEPRECATION).length,
    102,
  );
  assert.deepEqual(
    config.filter((s) => !s.deprecated).map((s) => s.name).sort(),
    [...UNDEPRECATED_CONFIG_FLAGS].sort(),
  );
  const cadvisor = FLAG_SPECS.filter((s) =>
    s.group === "global" && s.kind !== "version" && s.name !== "help"
  );
  assert.equal(cadvisor.length, 20);
  assert.deepEqual(
    cadvisor.filter((s) => s.deprecated !== CADVISOR_FLAG_DEPRECATION).map((
      s,
    ) => s.name),
    ["housekeeping-interval", "max-housekeeping-interval"],
  );
  const cliDeprecated = FLAG_SPECS.filter((s) =>
    s.group === "cli" && s.deprecated
  ).map((s) => s.name);
  assert.deepEqual(cliDeprecated.sort(), [
    "experimental-allocatable-ignore-eviction",
    "experimental-mounter-path",
    "maximum-dead-containers",
    "maximum-dead-containers-per-container",
    "minimum-container-ttl-duration",
    "pod-infra-container-image",
  ]);
});

Deno.test("FLAG_SPECS cli fields exist in KubeletFlags and config paths are unique", () => {
  const flags = defaultKubeletFlags() as unknown as Record<string, unknown>;
  for (const spec of FLAG_SPECS.filter((s) => s.group === "cli")) {
    assert.ok(spec.field in flags, `${spec.name} → ${spec.field}`);
  }
  const paths = FLAG_SPECS.filter((s) => s.group === "config").map((s) =>
    s.field
  );
  assert.equal(new Set(paths).size, paths.length);
  const cadvisor = defaultKubeletFlags().cadvisor;
  for (
    const spec of FLAG_SPECS.filter((s) =>
      s.group === "global" && s.field in cadvisor
    )
  ) {
    assert.equal(String(cadvisor[spec.field]), spec.def, spec.name);
  }
});

Deno.test("FLAG_SPECS help texts are present and only -v and -h have shorthands", () => {
  for (const spec of FLAG_SPECS) assert.ok(spec.usage.length > 10, spec.name);
  assert.deepEqual(
    FLAG_SPECS.filter((s) => s.shorthand).map((s) =>
      `${s.shorthand}:${s.name}`
    ),
    ["v:v", "h:help"],
  );
});
