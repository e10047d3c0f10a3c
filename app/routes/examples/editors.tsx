// /examples/editors (docs/build-your-app.md): a page for a role, and a form for a permission, both
// from app/auth.config.ts. The guide quotes this file; tests/integration/app/build-your-app.test.ts
// runs it. Only under `npm run dev` and in builds made with VESTIBULE_EXAMPLES=1 (app/routes.ts).
import { data, Form, useActionData, useLoaderData, type ActionFunctionArgs, type LoaderFunctionArgs } from "react-router";
import { csrfToken, readForm, requirePermission, requireRole, verifyCsrf } from "~/auth";
import { PageTitle } from "~/components/site-name";
import { useT } from "~/i18n/react";

// Editors and admins only: anyone else signed in gets the "not allowed" page (403).
export async function loader({ request }: LoaderFunctionArgs) {
  const { role, headers } = await requireRole(request, ["editor", "admin"]);
  const csrf = csrfToken(request);
  csrf.headers.forEach((value, name) => headers.append(name, value));
  return data({ role, csrfToken: csrf.token }, { headers });
}

// Whoever's role grants "notes:edit" (editors; admins hold every permission).
export async function action({ request }: ActionFunctionArgs) {
  await requirePermission(request, "notes:edit");
  const form = await readForm(request);
  if (!verifyCsrf(request, form.csrfToken)) return data({ published: false }, { status: 403 });
  return { published: true };
}

export default function Editors() {
  const t = useT();
  const loaderData = useLoaderData<typeof loader>();
  const actionData = useActionData<typeof action>();
  return (
    <main>
      <PageTitle page={t("example.editors.title")} />
      <section className="card">
        <h1>{t("example.editors.title")}</h1>
        <p id="editors-role">{t("example.editors.role", { role: loaderData.role })}</p>
        {actionData ? <p role="status">{actionData.published ? t("example.editors.published") : t("example.profile.refused")}</p> : null}
        <Form method="post">
          <input type="hidden" name="csrfToken" value={loaderData.csrfToken} />
          <button type="submit">{t("example.editors.publish")}</button>
        </Form>
      </section>
    </main>
  );
}
