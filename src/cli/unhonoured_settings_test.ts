import assert from "node:assert/strict";
import { unhonouredSettings } from "./unhonoured_settings.ts";

const DEFAULTS = {
  cpuManagerPolicy: "none",
  memoryManagerPolicy: "None",
  topologyManagerPolicy: "none",
  memorySwap: {},
  singleProcessOOMKill: true,
};
const NO_FLAGS = {
  imageCredentialProviderConfig: "",
  imageCredentialProviderBinDir: "",
};

function fields(warnings: string[]): string[] {
  return warnings.map((w) => w.slice(0, w.indexOf(":")));
}

Deno.test("unhonouredSettings(): the defaults (with singleProcessOOMKill true) warn of nothing", () => {
  assert.deepEqual(unhonouredSettings(DEFAULTS, NO_FLAGS), []);
  assert.deepEqual(
    unhonouredSettings(
      { ...DEFAULTS, memorySwap: { swapBehavior: "NoSwap" } },
      NO_FLAGS,
    ),
    [],
  );
});

Deno.test("unhonouredSettings(): each setting not carried out is one warning naming it", () => {
  const warnings = unhonouredSettings({
    cpuManagerPolicy: "static",
    memoryManagerPolicy: "Static",
    topologyManagerPolicy: "single-numa-node",
    memorySwap: { swapBehavior: "LimitedSwap" },
  }, {
    imageCredentialProviderConfig: "/etc/kubernetes/credential-providers.yaml",
    imageCredentialProviderBinDir:
      "/usr/libexec/kubernetes/credential-providers",
  });
  assert.deepEqual(fields(warnings), [
    "cpuManagerPolicy",
    "memoryManagerPolicy",
    "topologyManagerPolicy",
    "memorySwap.swapBehavior",
    "singleProcessOOMKill",
    "--image-credential-provider-config",
    "--image-credential-provider-bin-dir",
  ]);
  assert.match(warnings[0]!, /"static" is not carried out/);
});

Deno.test("unhonouredSettings(): singleProcessOOMKill false or unset warns (upstream groups the OOM kill on cgroup v2)", () => {
  for (const value of [false, undefined]) {
    const { singleProcessOOMKill: _, ...rest } = DEFAULTS;
    const config = value === undefined
      ? rest
      : { ...rest, singleProcessOOMKill: value };
    assert.deepEqual(fields(unhonouredSettings(config, NO_FLAGS)), [
      "singleProcessOOMKill",
    ]);
  }
});
