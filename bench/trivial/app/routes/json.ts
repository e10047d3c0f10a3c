// Answers what GET /auth/session answers for a signed-in user, with the same no-cache headers.
const BODY = { user: { name: "Bench", email: "bench@example.com", image: null }, expires: "2026-12-25T00:00:00.000Z" };

export function loader() {
  return Response.json(BODY, { headers: { "Cache-Control": "private, no-cache, no-store", Pragma: "no-cache", Expires: "0" } });
}
