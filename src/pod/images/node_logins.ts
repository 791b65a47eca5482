/**
 * The node's registry logins as the image puller asks for them: the node's docker config
 * files, then the image credential plugins of `--image-credential-provider-config`.
 * @module
 */
import type { Clock } from "../../clock/mod.ts";
import type { Logger } from "../../log/mod.ts";
import { errorMessage } from "../../util/error_message.ts";
import {
  CredentialProviderConfigError,
  DENO_CONFIG_FILES,
  readCredentialProviderConfig,
} from "./credential_provider_config.ts";
import {
  checkCredentialPluginBinaries,
  denoCredentialPluginRunner,
} from "./credential_plugin_exec.ts";
import { CredentialPlugins } from "./credential_plugins.ts";
import type { NodeLoginSource } from "./image_puller.ts";
import { NodeDockerConfig, readOptionalText } from "./node_docker_config.ts";
import { keyringOf } from "./pull_credentials.ts";

/** Where the node's logins come from. */
export interface NodeLoginSettings {
  /** `--root-dir`: its `config.json` / `.dockercfg` are read first. */
  rootDir: string;
  /** `--image-credential-provider-config` (empty: no plugins). */
  providerConfig: string;
  /** `--image-credential-provider-bin-dir`. */
  providerBinDir: string;
}

function processFacts(): { cwd?: string; home?: string } {
  const facts: { cwd?: string; home?: string } = {};
  try {
    facts.cwd = Deno.cwd();
  } catch {
    // not granted: the working directory is not searched
  }
  const home = Deno.permissions.querySync({ name: "env", variable: "HOME" });
  if (home.state === "granted") {
    const value = Deno.env.get("HOME");
    if (value) facts.home = value;
  }
  return facts;
}

/**
 * Builds the node's login source; with a plugin config, reads and checks it and the plugin
 * executables first.
 * @throws {CredentialProviderConfigError} (`failed to register CRI auth plugins: …`) when the
 * plugin config, its bin dir or a plugin executable is wrong; the kubelet must not start.
 */
export async function createNodeLogins(
  settings: NodeLoginSettings,
  deps: { clock: Clock; logger: Logger },
): Promise<NodeLoginSource> {
  const files = new NodeDockerConfig(
    { rootDir: settings.rootDir, ...processFacts() },
    { read: readOptionalText, ...deps },
  );
  let plugins: CredentialPlugins | undefined;
  if (settings.providerConfig || settings.providerBinDir) {
    try {
      const providers = await readCredentialProviderConfig(
        settings.providerConfig,
        DENO_CONFIG_FILES,
      );
      await checkCredentialPluginBinaries(settings.providerBinDir, providers);
      plugins = new CredentialPlugins(providers, {
        run: denoCredentialPluginRunner(settings.providerBinDir),
        ...deps,
      });
      deps.logger.info("Registered image credential plugins", {
        providers: providers.map((p) => p.name),
      });
    } catch (e) {
      throw new CredentialProviderConfigError(
        `failed to register CRI auth plugins: ${errorMessage(e)}`,
      );
    }
  }
  return async (repository) => [
    keyringOf([await files.config()]),
    ...(plugins ? [await plugins.keyring(repository)] : []),
  ];
}
