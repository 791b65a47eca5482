import assert from "node:assert/strict";
import {
  changedIgnoredSettings,
  NOT_CARRIED_OUT,
  unhonouredSettings,
} from "./unhonoured_settings.ts";
import {
  defaultKubeletConfiguration,
  type KubeletConfiguration,
} from "../config/mod.ts";

const DEFAULTS = {
  cpuManagerPolicy: "none",
  memoryManagerPolicy: "None",
  topologyManagerPolicy: "none",
  memorySwap: {},
};

function fields(warnings: string[]): string[] {
  return warnings.map((w) => w.slice(0, w.indexOf(":")));
}

Deno.test("unhonouredSettings(): the defaults warn of nothing", () => {
  assert.deepEqual(unhonouredSettings(DEFAULTS), []);
  assert.deepEqual(
    unhonouredSettings({ ...DEFAULTS, memorySwap: { swapBehavior: "NoSwap" } }),
    [],
  );
});

Deno.test("unhonouredSettings(): each setting not carried out is one warning naming it", () => {
  const warnings = unhonouredSettings({
    cpuManagerPolicy: "static",
    memoryManagerPolicy: "Static",
    topologyManagerPolicy: "single-numa-node",
    memorySwap: { swapBehavior: "LimitedSwap" },
  });
  assert.deepEqual(fields(warnings), [
    "cpuManagerPolicy",
    "memoryManagerPolicy",
    "topologyManagerPolicy",
    "memorySwap.swapBehavior",
  ]);
  assert.match(warnings[0]!, /"static" is not carried out/);
});

Deno.test("unhonouredSettings(): singleProcessOOMKill is carried out whatever its value", () => {
  for (const value of [false, true, undefined]) {
    const config = value === undefined
      ? DEFAULTS
      : { ...DEFAULTS, singleProcessOOMKill: value };
    assert.deepEqual(unhonouredSettings(config), []);
  }
});

Deno.test("changedIgnoredSettings(): each field no part reads warns once set away from its default", () => {
  const defaults = defaultKubeletConfiguration();
  assert.deepEqual(changedIgnoredSettings(defaults), []);
  for (const field of NOT_CARRIED_OUT) {
    const config = {
      ...defaults,
      [field]: { changed: true },
    } as unknown as KubeletConfiguration;
    const warnings = changedIgnoredSettings(config);
    assert.equal(warnings.length, 1, field);
    assert.ok(
      warnings[0]!.startsWith(
        `${field}: set to {"changed":true}, but kubelet.ts does not read this setting`,
      ),
      warnings[0],
    );
  }
  const gc = changedIgnoredSettings({
    ...defaults,
    registryPullQPS: 10,
    podsPerCore: 4,
  });
  assert.deepEqual(gc, [
    "registryPullQPS: set to 10, but kubelet.ts does not read this setting: it behaves as with the default 5",
    "podsPerCore: set to 4, but kubelet.ts does not read this setting: it behaves as when it is unset",
  ]);
});
