/**
 * Config decode robustness and speed (a larger run of src/config/fuzz_test.ts):
 * 10,000 mutated KubeletConfiguration documents must give 0 crashes and 0
 * hangs, and every rejected type mutation must name a field.
 */
import { createFeatureGates } from "../src/features/mod.ts";
import {
  ConfigError,
  decodeKubeletConfiguration,
  defaultKubeletConfiguration,
  toKubeletConfigurationYaml,
  validateKubeletConfiguration,
} from "../src/config/mod.ts";
import { generateFuzzInputs } from "../src/config/testing.ts";

const COUNT = 10_000;
const HANG_MS = 1_000;

async function main(): Promise<void> {
  const inputs = generateFuzzInputs(COUNT, 2026);
  const gates = createFeatureGates();
  const quiet = { info() {} };
  let crashes = 0;
  let hangs = 0;
  let rejected = 0;
  let typeRejected = 0;
  let typeRejectedWithField = 0;
  let slowest = 0;
  const started = performance.now();
  for (const input of inputs) {
    const t0 = performance.now();
    try {
      const config = await decodeKubeletConfiguration(input.text, {
        logger: quiet,
      });
      validateKubeletConfiguration(config, gates);
    } catch (err) {
      if (!(err instanceof ConfigError)) crashes++;
      else {
        rejected++;
        if (input.kind === "type") {
          typeRejected++;
          if (err.field !== undefined || /feature gate/.test(err.message)) {
            typeRejectedWithField++;
          }
        }
      }
    }
    const spent = performance.now() - t0;
    slowest = Math.max(slowest, spent);
    if (spent > HANG_MS) hangs++;
  }
  const total = performance.now() - started;
  const text = await toKubeletConfigurationYaml(defaultKubeletConfiguration());
  const rounds = 500;
  const t1 = performance.now();
  for (let i = 0; i < rounds; i++) await decodeKubeletConfiguration(text);
  const perDecode = (performance.now() - t1) / rounds;
  const fieldRatio = typeRejected === 0
    ? 1
    : typeRejectedWithField / typeRejected;
  // deno-lint-ignore no-console
  console.log(
    [
      `config fuzz: ${COUNT} inputs in ${
        total.toFixed(0)
      } ms, ${rejected} rejected`,
      `config fuzz: crashes ${crashes} (target 0), hangs >${HANG_MS}ms ${hangs} (target 0), slowest ${
        slowest.toFixed(1)
      } ms`,
      `config fuzz: type errors naming a field ${
        (fieldRatio * 100).toFixed(1)
      }% (target 100%)`,
      `config decode: full default document ${
        perDecode.toFixed(2)
      } ms per decode (target < 50 ms, ratio ${(perDecode / 50).toFixed(3)})`,
    ].join("\n"),
  );
}

await main();
