// The Vite plugin behind `npm run dev`: before the first request it validates the
// configuration, creates and migrates the embedded database, seeds the demo user and starts the
// offline helpers (dev IdP, mail outbox). It loads app/dev/bootstrap.server.ts through Vite's
// SSR module graph so it shares the app's database client and configuration.
import type { Plugin, ViteDevServer } from "vite";

export function devBootstrap(): Plugin {
  return {
    name: "vestibule-dev-bootstrap",
    apply: "serve",
    async configureServer(server: ViteDevServer) {
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
