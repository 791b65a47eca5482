/**
 * Runs an image credential plugin: `<bin dir>/<name> args…` with the kubelet's environment
 * plus the provider's `env`, the request on stdin, one minute at most (upstream's fixed
 * timeout). Also the start-up check that the bin dir and every plugin executable exist.
 * @module
 */
import { errorMessage } from "../../util/error_message.ts";
import {
  type CredentialProvider,
  CredentialProviderConfigError,
} from "./credential_provider_config.ts";
import type { RunCredentialPlugin } from "./credential_plugins.ts";

/** Upstream's catch-all timeout for one plugin run. */
export const CREDENTIAL_PLUGIN_TIMEOUT_MS = 60_000;

/** The executable of `provider` in `binDir`. */
export function credentialPluginPath(binDir: string, name: string): string {
  return `${binDir.replace(/\/+$/, "")}/${name}`;
}

/**
 * Refuses a bin dir that does not exist and a provider whose executable is missing or not
 * executable, as upstream's `RegisterCredentialProviderPlugins` does.
 * @throws {CredentialProviderConfigError}
 */
export async function checkCredentialPluginBinaries(
  binDir: string,
  providers: readonly CredentialProvider[],
): Promise<void> {
  try {
    await Deno.stat(binDir);
  } catch (e) {
    throw new CredentialProviderConfigError(
      e instanceof Deno.errors.NotFound
        ? `plugin binary directory ${binDir} did not exist`
        : `error inspecting binary directory ${binDir}: ${errorMessage(e)}`,
    );
  }
  for (const { name } of providers) {
    const path = credentialPluginPath(binDir, name);
    let info: Deno.FileInfo;
    try {
      info = await Deno.stat(path);
    } catch (e) {
      throw new CredentialProviderConfigError(
        e instanceof Deno.errors.NotFound
          ? `plugin binary executable ${path} did not exist`
          : `error inspecting binary executable ${path}: ${errorMessage(e)}`,
      );
    }
    if (!info.isFile || ((info.mode ?? 0) & 0o111) === 0) {
      throw new CredentialProviderConfigError(
        `error inspecting binary executable ${path}: not an executable file`,
      );
    }
  }
}

/** {@linkcode RunCredentialPlugin} over `Deno.Command`. */
export function denoCredentialPluginRunner(
  binDir: string,
  timeoutMs = CREDENTIAL_PLUGIN_TIMEOUT_MS,
): RunCredentialPlugin {
  return async (provider, stdin, image) => {
    const signal = AbortSignal.timeout(timeoutMs);
    const failed = (why: string, stderr = "") =>
      new Error(
        `error execing credential provider plugin ${provider.name} for image ${image}: ${why}: ${stderr}`,
      );
    let child: Deno.ChildProcess;
    try {
      child = new Deno.Command(credentialPluginPath(binDir, provider.name), {
        args: provider.args,
        env: Object.fromEntries(provider.env.map((e) => [e.name, e.value])),
        stdin: "piped",
        stdout: "piped",
        stderr: "piped",
        signal,
      }).spawn();
    } catch (e) {
      throw failed(errorMessage(e));
    }
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(stdin)).catch(() => {});
    await writer.close().catch(() => {});
    const out = await child.output();
    const stderr = new TextDecoder().decode(out.stderr);
    if (signal.aborted) throw failed("context deadline exceeded", stderr);
    if (!out.success) {
      throw failed(
        out.signal ? `signal: ${out.signal}` : `exit status ${out.code}`,
        stderr,
      );
    }
    return new TextDecoder().decode(out.stdout);
  };
}
