// app/auth.config.ts as docs/build-your-app.md writes it with a session function (the guide quotes
// this file; tsc compiles it; tests/integration/app/session-extras.test.ts runs its function).
import { defineAuthConfig } from "~/auth/config";

export default defineAuthConfig({
  roles: {
    editor: { permissions: ["notes:edit"] },
  },
  session({ user }) {
    return { role: user.role, locale: user.locale };
  },
});
