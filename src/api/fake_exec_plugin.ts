/**
 * An exec credential plugin for tests: a shell script `plugin.sh` and a kubeconfig whose only
 * user runs it (apiVersion v1, `interactiveMode: Never`, `provideClusterInfo: true`), both in
 * one directory; the command is relative, so it resolves against the kubeconfig's directory.
 * @module
 */

/** What {@linkcode writeExecPlugin} writes. */
export interface ExecPluginFiles {
  /** The script's body after `#!/bin/sh`. */
  script: string;
  server: string;
  /** base64 CA for `certificate-authority-data`, if any. */
  caData?: string;
  args?: string[];
  env?: Record<string, string>;
}

/** The ExecCredential apiVersion the written kubeconfig asks for. */
export const EXEC_PLUGIN_API_VERSION = "client.authentication.k8s.io/v1";

/** Writes `<dir>/plugin.sh` and `<dir>/kubeconfig`; returns the kubeconfig's path. */
export async function writeExecPlugin(
  dir: string,
  files: ExecPluginFiles,
): Promise<string> {
  await Deno.writeTextFile(`${dir}/plugin.sh`, `#!/bin/sh\n${files.script}\n`, {
    mode: 0o755,
  });
  const ca = files.caData
    ? `, certificate-authority-data: ${files.caData}`
    : "";
  const path = `${dir}/kubeconfig`;
  await Deno.writeTextFile(
    path,
    [
      "apiVersion: v1",
      "kind: Config",
      "current-context: c",
      "contexts: [{name: c, context: {cluster: k, user: u}}]",
      `clusters: [{name: k, cluster: {server: '${files.server}'${ca}}}]`,
      "users:",
      "- name: u",
      "  user:",
      "    exec:",
      `      apiVersion: ${EXEC_PLUGIN_API_VERSION}`,
      "      command: ./plugin.sh",
      `      args: ${JSON.stringify(files.args ?? [])}`,
      `      env: ${
        JSON.stringify(
          Object.entries(files.env ?? {}).map(([name, value]) => ({
            name,
            value,
          })),
        )
      }`,
      "      interactiveMode: Never",
      "      provideClusterInfo: true",
      "",
    ].join("\n"),
  );
  return path;
}
