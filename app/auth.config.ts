// The app's own auth configuration (docs/build-your-app.md): the roles it adds to `user` and
// `admin`, the permissions each grants, and the extra claims of the session's user.
// `npm run user:role`, /admin's role control, requireRole and requirePermission (~/auth) read the
// roles from here; an admin holds every permission named here.
import { defineAuthConfig } from "./auth/config";

export default defineAuthConfig({
  roles: {
    // An example role, used by /examples/editors: rename it, give it your permissions, or remove it.
    editor: { permissions: ["notes:edit"] },
  },
  // Extra claims of the session's user (GET /auth/session, useSession()), e.g. a column you added
  // to the User model: session({ user }) { return { plan: user.plan }; }
});
