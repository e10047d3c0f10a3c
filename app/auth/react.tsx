// The signed-in session for the app's own pages: `useSession()` from "~/auth/react" reads the
// session the root loader already sent with the page (app/root.tsx), so a page knows who is signed
// in from its first render — no request to /auth/session, no "loading" flash. Sign-in and sign-out
// end in a navigation, and React Router revalidates the root loader after every action, so the
// value follows them; `update()` asks for the root loader's data again.
// The shape is next-auth/react's ({ data, status, update }), without its "loading" state.
// (next-auth/react itself works too, with <SessionProvider basePath="/auth">: docs/app-pages.md.)
import { createContext, useContext } from "react";
import type { SessionData } from "./core/session.server";

export type Session = SessionData;

export type SessionState =
  | { data: Session; status: "authenticated"; update: () => Promise<void> }
  | { data: null; status: "unauthenticated"; update: () => Promise<void> };

type Provided = { session: Session | null; update: () => Promise<void> };

const SessionContext = createContext<Provided | null>(null);

const noUpdate = async () => {};

/** Given the root loader's `session` by the root layout (app/root.tsx); `update` revalidates it. */
export function SessionProvider({ session, update = noUpdate, children }: { session: Session | null; update?: () => Promise<void>; children: React.ReactNode }) {
  return <SessionContext value={{ session, update }}>{children}</SessionContext>;
}

/** Who is signed in, from the page's own data: "authenticated" with the session, or "unauthenticated". */
export function useSession(): SessionState {
  const provided = useContext(SessionContext);
  if (!provided) throw new Error("useSession() from ~/auth/react works inside the root layout (app/root.tsx), which provides the session");
  return provided.session ? { data: provided.session, status: "authenticated", update: provided.update } : { data: null, status: "unauthenticated", update: provided.update };
}
