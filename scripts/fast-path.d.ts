// Types for scripts/fast-path.js (plain JavaScript: scripts/server.js loads it without a build step).
import type { IncomingMessage, ServerResponse } from "node:http";

export declare const FAST_PATHS: readonly string[];

export type FastPath = ((req: IncomingMessage, res: ServerResponse) => boolean) & { paths: string[] };

export declare function createFastPath(build: unknown, options?: { clientDirectory?: string }): FastPath;
