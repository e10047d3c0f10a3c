// The Vite plugin behind `npm run dev`: before the first request it validates the
// configuration, creates and migrates the embedded database, seeds the demo user and starts the
// offline helpers (dev IdP, mail outbox). It loads app/dev/bootstrap.server.ts through Vite's
// SSR module graph so it shares the app's database client and configuration. It also stands where
// server/main.ts stands in production for the client's address (stampPeerAddress).
import type { IncomingMessage } from "node:http";
import type { Plugin, ViteDevServer } from "vite";
import { loadCommandEnvFile } from "../app/auth/core/env-file.server.ts";

/**
 * The TCP peer, for the client address (app/auth/core/request.server.ts): only ever the socket's.
 * A copy the client sent itself is replaced, as server/main.ts does in production; without
 * this, under `npm run dev` a client naming any address in the header would be believed.
 */
export function stampPeerAddress(req: IncomingMessage) {
  req.headers["x-vestibule-remote-addr"] = req.socket.remoteAddress ?? "";
}

export function devBootstrap(): Plugin {
  // The settings file, before anything reads a setting (ADR 113): VESTIBULE_ENV_FILE's, else the
  // project's .env when there is one; a variable already in the environment wins. A malformed line
  // stops `npm run dev` naming the file and the line.
  try {
    loadCommandEnvFile();
  } catch (error) {
    console.error(`npm run dev: ${(error as Error).message}`);
    process.exit(1);
  }
  return {
    name: "vestibule-dev-bootstrap",
    apply: "serve",
    async configureServer(server: ViteDevServer) {
      // Installed here, before React Router's own middleware (which the plugin after this adds).
      server.middlewares.use((req, _res, next) => {
        stampPeerAddress(req);
        next();
      });
      // The OAuth provider's endpoints (AUTH_PROVIDER=true), before React Router, as server/main.ts
      // does in production; loaded through the SSR module graph, so the pages share its engine.
      server.middlewares.use((req, res, next) => {
        const path = (req.url ?? "/").split("?", 1)[0]!;
        void (server.ssrLoadModule("/app/auth/provider/engine.server.ts") as Promise<typeof import("../app/auth/provider/engine.server")>).then(
          (engine) => (engine.isEnginePath(path) ? engine.handleEngineRequest(req, res) : next()),
          (error: unknown) => next(error),
        );
      });
      const { bootstrapDev } = (await server.ssrLoadModule("/app/dev/bootstrap.server.ts")) as typeof import("../app/dev/bootstrap.server");
      try {
        await bootstrapDev((line) => server.config.logger.info(line));
      } catch (error) {
        const e = error as Error;
        server.config.logger.error(e.name === "ConfigError" ? e.message : `Dev bootstrap failed: ${e.message}`);
        process.exit(1);
      }
    },
  };
}
