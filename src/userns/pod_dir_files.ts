/**
 * The mappings file in the pod directories, `<root-dir>/pods/<uid>/userns`, written as
 * upstream's file store writes it: a hidden temporary file in the same directory, renamed
 * over the old one, then the directory synced so the rename survives a crash.
 * @module
 */
import { MAPPINGS_FILE } from "./id_mappings.ts";
import type { PodDirFiles } from "./userns_manager.ts";

/** The files under `<rootDir>/pods`. */
export function podDirFiles(rootDir: string): PodDirFiles {
  const podsDir = `${rootDir}/pods`;
  const dirOf = (uid: string) => `${podsDir}/${uid}`;
  return {
    async read(uid) {
      try {
        return await Deno.readTextFile(`${dirOf(uid)}/${MAPPINGS_FILE}`);
      } catch (error) {
        if (error instanceof Deno.errors.NotFound) return undefined;
        throw error;
      }
    },
    async write(uid, text) {
      const dir = dirOf(uid);
      await Deno.mkdir(dir, { recursive: true, mode: 0o755 });
      const tmp = `${dir}/.${MAPPINGS_FILE}${crypto.randomUUID().slice(0, 8)}`;
      try {
        const file = await Deno.open(tmp, {
          write: true,
          createNew: true,
          mode: 0o600,
        });
        try {
          await file.write(new TextEncoder().encode(text));
          await file.sync();
        } finally {
          file.close();
        }
        await Deno.rename(tmp, `${dir}/${MAPPINGS_FILE}`);
      } catch (error) {
        await Deno.remove(tmp).catch(() => {});
        throw error;
      }
      const parent = await Deno.open(dir, { read: true });
      try {
        await parent.sync();
      } finally {
        parent.close();
      }
    },
    async remove(uid) {
      await Deno.remove(`${dirOf(uid)}/${MAPPINGS_FILE}`).catch((error) => {
        if (!(error instanceof Deno.errors.NotFound)) throw error;
      });
    },
    async listPods() {
      const uids: string[] = [];
      try {
        for await (const entry of Deno.readDir(podsDir)) {
          if (entry.isDirectory) uids.push(entry.name);
        }
      } catch (error) {
        if (error instanceof Deno.errors.NotFound) return [];
        throw error;
      }
      return uids;
    },
  };
}
