import { badRequest } from "~/auth/core";

// Any other path under /auth, with any method: the 400.
export const loader = () => badRequest();
export const action = () => badRequest();
