// /examples/profile (docs/build-your-app.md): a page only a signed-in user sees, and a form only a
// recent sign-in may send. The guide quotes this file; tests/integration/app/build-your-app.test.ts
// runs it. Only under `npm run dev` and in builds made with VESTIBULE_EXAMPLES=1 (app/routes.ts).
import { data, Form, useActionData, useLoaderData, type ActionFunctionArgs, type LoaderFunctionArgs } from "react-router";
import { csrfToken, readForm, requireRecentAuth, requireUser, verifyCsrf } from "~/auth";
import { PageTitle } from "~/components/site-name";
import { useT } from "~/i18n/react";

// A page for signed-in users: anyone else goes to the sign-in page and comes back here.
export async function loader({ request }: LoaderFunctionArgs) {
  const { user } = await requireUser(request);
  // The form's CSRF token; its headers set the token's cookie when the browser has none yet.
  // (The session cookie's re-issue reaches the answer without passing requireUser's headers.)
  const csrf = csrfToken(request);
  return data({ email: user.email, csrfToken: csrf.token }, { headers: csrf.headers });
}

// A change that needs a sign-in within the last 10 minutes; a POST from another site never gets here.
export async function action({ request }: ActionFunctionArgs) {
  await requireRecentAuth(request, { maxAge: 600 });
  const form = await readForm(request);
  if (!verifyCsrf(request, form.csrfToken)) return data({ confirmed: false }, { status: 403 });
  // …the change itself, for the signed-in user…
  return { confirmed: true };
}

export default function Profile() {
  const t = useT();
  const loaderData = useLoaderData<typeof loader>();
  const actionData = useActionData<typeof action>();
  return (
    <main>
      <PageTitle page={t("example.profile.title")} />
      <section className="card">
        <h1>{t("example.profile.title")}</h1>
        <p id="profile-email">{t("example.session.signedInAs", { address: loaderData.email ?? "" })}</p>
        {actionData ? <p role="status">{actionData.confirmed ? t("example.profile.confirmed") : t("example.profile.refused")}</p> : null}
        <Form method="post">
          <input type="hidden" name="csrfToken" value={loaderData.csrfToken} />
          <button type="submit">{t("example.profile.confirm")}</button>
        </Form>
      </section>
    </main>
  );
}
