/**
 * `sim://` endpoints: `sim://default` is the default scenario,
 * `sim:///abs/path/scenario.yaml` (or `.json`) loads a scenario file.
 */

import { readYaml } from "../../util/yaml.ts";
import {
  createSimRuntime,
  type SimRuntime,
  type SimRuntimeOptions,
} from "./sim_runtime.ts";
import type { SimScenario } from "./scenario.ts";
import { errorMessage } from "../../util/error_message.ts";

const SIM_SCHEME = "sim://";

/** True when `endpoint` selects the simulated runtime (`sim://...`). */
export function isSimEndpoint(endpoint: string): boolean {
  return endpoint.trim().toLowerCase().startsWith(SIM_SCHEME);
}

/**
 * Reads the scenario a `sim://` endpoint names.
 * @throws TypeError for a non-sim endpoint, an unknown name or a bad file
 */
export async function loadSimScenario(endpoint: string): Promise<SimScenario> {
  if (!isSimEndpoint(endpoint)) {
    throw new TypeError(
      `Invalid simulated runtime endpoint "${endpoint}": it must start with "sim://", e.g. "sim://default"`,
    );
  }
  const rest = endpoint.trim().slice(SIM_SCHEME.length);
  if (rest === "" || rest === "default") return {};
  if (!rest.startsWith("/")) {
    throw new TypeError(
      `Invalid simulated runtime endpoint "${endpoint}": use "sim://default" or "sim:///absolute/path/scenario.yaml"`,
    );
  }
  let text: string;
  try {
    text = await Deno.readTextFile(rest);
  } catch (error) {
    throw new TypeError(
      `Cannot read simulated runtime scenario file "${rest}" from endpoint "${endpoint}": ${
        errorMessage(error)
      }`,
      { cause: error },
    );
  }
  // zod loads only here, when a scenario file is used.
  let data: unknown;
  try {
    data = (await readYaml(text)).value; // JSON is YAML too
  } catch (error) {
    throw new TypeError(
      `Cannot parse simulated runtime scenario file "${rest}": ${
        errorMessage(error)
      }`,
      { cause: error },
    );
  }
  const { parseSimScenario } = await import("./scenario.ts");
  return parseSimScenario(data, `scenario file "${rest}"`);
}

/** Builds the simulated runtime a `sim://` endpoint describes. */
export async function createSimRuntimeForEndpoint(
  endpoint: string,
  options: Omit<SimRuntimeOptions, "scenario"> = {},
): Promise<SimRuntime> {
  const scenario = await loadSimScenario(endpoint);
  return createSimRuntime({ ...options, scenario });
}
