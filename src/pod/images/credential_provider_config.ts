/**
 * `--image-credential-provider-config`: the `CredentialProviderConfig` that names the image
 * credential plugins (upstream `pkg/credentialprovider/plugin`, `readCredentialProviderConfig`
 * and `validateCredentialProviderConfig`). The path is a file, or a directory whose `.json`,
 * `.yaml` and `.yml` files are read in name order and their providers concatenated. Decoding is
 * strict (unknown and repeated fields are errors), as upstream's codec is.
 * @module
 */
import { z } from "zod";
import { errorMessage } from "../../util/error_message.ts";
import { parseGoDuration } from "../../util/go_duration.ts";
import { readYaml } from "../../util/yaml.ts";

/** The API versions a plugin may speak (request and response). */
export const CREDENTIAL_PROVIDER_API_VERSIONS = [
  "credentialprovider.kubelet.k8s.io/v1",
  "credentialprovider.kubelet.k8s.io/v1alpha1",
  "credentialprovider.kubelet.k8s.io/v1beta1",
] as const;

const CONFIG_API_VERSIONS = [
  "kubelet.config.k8s.io/v1",
  "kubelet.config.k8s.io/v1alpha1",
  "kubelet.config.k8s.io/v1beta1",
];

const ProviderSchema = z.strictObject({
  name: z.string().optional(),
  matchImages: z.array(z.string()).nullish(),
  defaultCacheDuration: z.string().nullish(),
  apiVersion: z.string().optional(),
  args: z.array(z.string()).nullish(),
  env: z.array(z.strictObject({ name: z.string(), value: z.string() }))
    .nullish(),
  tokenAttributes: z.strictObject({
    serviceAccountTokenAudience: z.string().optional(),
    cacheType: z.string().optional(),
    requireServiceAccount: z.boolean().nullish(),
    requiredServiceAccountAnnotationKeys: z.array(z.string()).nullish(),
    optionalServiceAccountAnnotationKeys: z.array(z.string()).nullish(),
  }).nullish(),
});

const ConfigSchema = z.strictObject({
  apiVersion: z.string(),
  kind: z.string(),
  providers: z.array(ProviderSchema).nullish(),
});

/** One plugin, as the kubelet runs it. */
export interface CredentialProvider {
  name: string;
  matchImages: string[];
  /** Milliseconds. */
  defaultCacheDuration: number;
  apiVersion: typeof CREDENTIAL_PROVIDER_API_VERSIONS[number];
  args: string[];
  env: { name: string; value: string }[];
}

/** Raised for a config that cannot be read, decoded or validated; the kubelet does not start. */
export class CredentialProviderConfigError extends Error {
  override name = "CredentialProviderConfigError";
}

/** What reading the config needs from the file system. */
export interface ConfigFiles {
  /** Whether `path` is a directory; rejects when it cannot be reached. */
  isDirectory(path: string): Promise<boolean>;
  /** The names of the regular files in directory `path`. */
  listFiles(path: string): Promise<string[]>;
  readText(path: string): Promise<string>;
}

/** The files a config path stands for: itself, or its directory's config files in name order. */
export async function credentialProviderConfigFiles(
  path: string,
  files: ConfigFiles,
): Promise<string[]> {
  if (!path) {
    throw new CredentialProviderConfigError(
      "credential provider config path is empty",
    );
  }
  let isDir: boolean;
  try {
    isDir = await files.isDirectory(path);
  } catch (e) {
    throw new CredentialProviderConfigError(
      `unable to access path "${path}": ${errorMessage(e)}`,
    );
  }
  if (!isDir) return [path];
  const names = (await files.listFiles(path))
    .filter((n) => /\.(json|yaml|yml)$/.test(n))
    .sort();
  if (names.length === 0) {
    throw new CredentialProviderConfigError(
      `no configuration files found in directory "${path}"`,
    );
  }
  return names.map((n) => `${path.replace(/\/+$/, "")}/${n}`);
}

type RawProvider = z.infer<typeof ProviderSchema>;

async function decodeFile(
  file: string,
  text: string,
): Promise<RawProvider[]> {
  const fail = (why: string) =>
    new CredentialProviderConfigError(
      `error decoding config "${file}": ${why}`,
    );
  let value: unknown;
  try {
    value = (await readYaml(text)).value;
  } catch (e) {
    throw fail(errorMessage(e));
  }
  const parsed = ConfigSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const where = issue.path.join(".");
    throw fail(where ? `${where}: ${issue.message}` : issue.message);
  }
  const { apiVersion, kind } = parsed.data;
  if (kind !== "CredentialProviderConfig") {
    throw fail(`failed to decode "${kind}" (wrong Kind)`);
  }
  if (!CONFIG_API_VERSIONS.includes(apiVersion)) {
    throw fail(
      `apiVersion "${apiVersion}" is not one of ${
        CONFIG_API_VERSIONS.join(", ")
      }`,
    );
  }
  return parsed.data.providers ?? [];
}

/**
 * Upstream's validation of the merged providers, one message per problem (field paths as
 * upstream prints them). `tokenAttributes` (plugins given a service account token) is refused:
 * kubelet.ts does not request such tokens, and running the plugin without one would fetch
 * credentials the pod's service account was never meant to get.
 */
export function credentialProviderProblems(providers: RawProvider[]): string[] {
  const problems: string[] = [];
  if (providers.length === 0) {
    problems.push(
      "providers: Required value: at least 1 item in plugins is required",
    );
  }
  const seen = new Set<string>();
  for (const p of providers) {
    const name = p.name ?? "";
    if (name.includes("/")) {
      problems.push(
        `providers.name: Invalid value: "${name}": provider name cannot contain '/'`,
      );
    }
    if (name.includes(" ")) {
      problems.push(
        `providers.name: Invalid value: "${name}": provider name cannot contain spaces`,
      );
    }
    if (name === "." || name === "..") {
      problems.push(
        `providers.name: Invalid value: "${name}": provider name cannot be '${name}'`,
      );
    }
    if (seen.has(name)) {
      problems.push(`providers.name: Duplicate value: "${name}"`);
    }
    seen.add(name);
    const apiVersion = p.apiVersion ?? "";
    if (!apiVersion) {
      problems.push("providers.apiVersion: Required value");
    } else if (
      !(CREDENTIAL_PROVIDER_API_VERSIONS as readonly string[]).includes(
        apiVersion,
      )
    ) {
      problems.push(
        `providers.apiVersion: Unsupported value: "${apiVersion}": supported values: ${
          CREDENTIAL_PROVIDER_API_VERSIONS.map((v) => `"${v}"`).join(", ")
        }`,
      );
    }
    const matchImages = p.matchImages ?? [];
    if (matchImages.length === 0) {
      problems.push(
        "providers.matchImages: Required value: at least 1 item in matchImages is required",
      );
    }
    for (const m of matchImages) {
      const why = matchImageProblem(m);
      if (why) {
        problems.push(
          `providers.matchImages: Invalid value: "${m}": match image is invalid: ${why}`,
        );
      }
    }
    if (p.defaultCacheDuration == null) {
      problems.push("providers.defaultCacheDuration: Required value");
    } else {
      try {
        if (parseGoDuration(p.defaultCacheDuration) < 0) {
          problems.push(
            `providers.defaultCacheDuration: Invalid value: "${p.defaultCacheDuration}": must be greater than or equal to 0`,
          );
        }
      } catch (e) {
        problems.push(`providers.defaultCacheDuration: ${errorMessage(e)}`);
      }
    }
    if (p.tokenAttributes != null) {
      problems.push(
        `providers.tokenAttributes: Forbidden: service account tokens for credential plugins are not supported by kubelet.ts; remove tokenAttributes from provider "${name}"`,
      );
    }
  }
  return problems;
}

/** Why a match image is not a valid schemeless URL (Go's `url.Parse("https://" + m)`), or undefined. */
export function matchImageProblem(matchImage: string): string | undefined {
  const at = `parse "https://${matchImage}"`;
  if ([...matchImage].some((c) => c < " " || c === "\x7f")) {
    return `${at}: net/url: invalid control character in URL`;
  }
  const slash = matchImage.indexOf("/");
  const host = slash < 0 ? matchImage : matchImage.slice(0, slash);
  const colon = host.lastIndexOf(":");
  if (colon >= 0 && !host.endsWith("]")) {
    const port = host.slice(colon + 1);
    if (!/^\d*$/.test(port)) {
      return `${at}: invalid port "${host.slice(colon)}" after host`;
    }
  }
  if (/[ "<>\\^`{|}]/.test(host.replace(/\*/g, ""))) {
    return `${at}: invalid character in host name`;
  }
  return undefined;
}

/**
 * Reads, decodes, merges and validates the config at `path`.
 * @throws {CredentialProviderConfigError} naming the file and every problem.
 */
export async function readCredentialProviderConfig(
  path: string,
  files: ConfigFiles,
): Promise<CredentialProvider[]> {
  const raw: RawProvider[] = [];
  const names = new Set<string>();
  for (const file of await credentialProviderConfigFiles(path, files)) {
    let text: string;
    try {
      text = await files.readText(file);
    } catch (e) {
      throw new CredentialProviderConfigError(
        `unable to read file "${file}": ${errorMessage(e)}`,
      );
    }
    for (const provider of await decodeFile(file, text)) {
      const name = provider.name ?? "";
      if (names.has(name)) {
        throw new CredentialProviderConfigError(
          `duplicate provider name "${name}" found in configuration file(s)`,
        );
      }
      names.add(name);
      raw.push(provider);
    }
  }
  const problems = credentialProviderProblems(raw);
  if (problems.length > 0) {
    throw new CredentialProviderConfigError(
      `failed to validate credential provider config "${path}": ${
        problems.length === 1 ? problems[0] : `[${problems.join(", ")}]`
      }`,
    );
  }
  return raw.map((p) => ({
    name: p.name!,
    matchImages: p.matchImages!,
    defaultCacheDuration: parseGoDuration(p.defaultCacheDuration!),
    apiVersion: p.apiVersion as CredentialProvider["apiVersion"],
    args: p.args ?? [],
    env: p.env ?? [],
  }));
}

/** {@linkcode ConfigFiles} over Deno's file system. */
export const DENO_CONFIG_FILES: ConfigFiles = {
  isDirectory: async (path) => (await Deno.stat(path)).isDirectory,
  listFiles: async (path) => {
    const names: string[] = [];
    for await (const e of Deno.readDir(path)) if (e.isFile) names.push(e.name);
    return names;
  },
  readText: (path) => Deno.readTextFile(path),
};
