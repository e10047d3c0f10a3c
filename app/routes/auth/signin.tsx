import { useEffect, useRef, useState } from "react";
import { data } from "react-router";
import { AuthCard, CsrfField, DocumentForm, Field } from "~/components/auth-forms";
import { Ltr } from "~/components/ltr";
import { PasskeySignIn } from "~/components/passkey-signin";
import { normalizeEmailAddress } from "~/auth/core/email-address";
import { jsonRedirectMiddleware } from "~/auth/core";
import { signinPageData, signinRootAction } from "~/auth/signin";
import { ConnectionChoice, fetchConnections, type OfferedConnection } from "~/components/connection-choice";
import { useT } from "~/i18n/react";
import type { Route } from "./+types/signin";

export const middleware: Route.MiddlewareFunction[] = [jsonRedirectMiddleware(signinRootAction)];

export async function loader({ request }: Route.LoaderArgs) {
  const page = await signinPageData(request);
  return data(page.data, { headers: page.headers });
}

export const action = ({ request }: Route.ActionArgs) => signinRootAction(request);


/**
 * The sign-in page, identifier first (ADR 087). Step one asks for the e-mail
 * address once — the field the browser's passkey autofill offers on — with the passkey button
 * beside it and the OAuth buttons below. Step two shows the address read-only with "change", and
 * the ways this deployment offers (password, e-mail link and code): the same for every address.
 * Without JavaScript the steps are two pages (POST /auth/signin, then ?step=methods); with it the
 * page swaps in place, moves the focus to the new step and says so in a live region.
 */
export default function SignIn({ loaderData }: Route.ComponentProps) {
  // A new answer of the loader (a client-side visit to another error or step) starts the form
  // afresh rather than keep the state of the last swap.
  const key = [loaderData.step, loaderData.email, loaderData.error?.code ?? ""].join("\n");
  return <SignInSteps key={key} {...loaderData} />;
}

function SignInSteps({ csrfToken, callbackUrl, providers, error, notice, email, step, signedInAs, passwordPages, connections: loadedConnections }: Route.ComponentProps["loaderData"]) {
  const t = useT();
  const oauth = providers.filter((p) => p.type === "oauth" || p.type === "oidc");
  const emailProvider = providers.find((p) => p.type === "email");
  const credentials = providers.find((p) => p.type === "credentials");
  const passkey = providers.find((p) => p.type === "webauthn");
  const asksAddress = Boolean(credentials || emailProvider);

  // The address of step two, or null on step one; with JavaScript, changed in place.
  const [address, setAddress] = useState<string | null>(step === "methods" && asksAddress ? email : null);
  // Step one's field keeps what was typed when "change" brings it back.
  const [typed, setTyped] = useState(email);
  const [announcement, setAnnouncement] = useState("");
  // Where the focus goes once a swap in place has rendered; null after a page load.
  const focusNext = useRef<"methods" | "address" | null>(null);
  const addressInput = useRef<HTMLInputElement>(null);
  // Step two starts at the password, or at the e-mail button when no password is offered.
  const passwordInput = useRef<HTMLInputElement>(null);
  const emailButton = useRef<HTMLButtonElement>(null);
  // A refusal after a swap belongs to the page that showed it, not to the next step.
  const [shownError, setShownError] = useState(error);
  // The address's organization sign-in ("Continue with …"), by its domain alone (ADR 152): from
  // the loader, or from the address step's JSON answer when the page swaps in place.
  const [connections, setConnections] = useState<OfferedConnection[]>(loadedConnections);

  useEffect(() => {
    const target = focusNext.current;
    focusNext.current = null;
    if (target === "methods") (passwordInput.current ?? emailButton.current)?.focus();
    else if (target === "address") addressInput.current?.focus();
  }, [address]);

  const toMethods = (event: React.FormEvent<HTMLFormElement>) => {
    const value = addressInput.current?.value ?? "";
    // A malformed address goes to the server, whose answer says what to change (as without JavaScript).
    if (!normalizeEmailAddress(value).ok) return;
    event.preventDefault();
    const form = event.currentTarget;
    const shown = value.trim();
    const swap = (found: OfferedConnection[]) => {
      setTyped(shown);
      setShownError(null);
      setConnections(found);
      focusNext.current = "methods";
      setAddress(shown);
      setAnnouncement(t("signin.chooseMethod", { address: shown }));
    };
    // The server knows which domains have a connection: ask it (the same answer for every address
    // of a domain); if it cannot answer, the form goes as without JavaScript.
    void fetchConnections(form)
      .then(swap)
      .catch(() => form.submit());
  };
  const toAddress = (event: React.MouseEvent<HTMLAnchorElement>) => {
    event.preventDefault();
    setShownError(null);
    focusNext.current = "address";
    setAddress(null);
    setAnnouncement(t("signin.enterAddress"));
  };

  const credentialsError = shownError?.code === "CredentialsSignin" && address !== null ? shownError.message : null;
  // A refused address says what to write instead. A limit (RateLimited) may be the password's or
  // the e-mail's, so it stands above both forms; its text already says how long to wait.
  const addressError = shownError?.code === "EmailInvalid" && address === null ? `${shownError.message} ${t("error.EmailInvalidHint")}` : null;
  const emailError = shownError?.code === "EmailSignin" && address !== null && emailProvider ? shownError.message : null;
  const generalError = shownError && !credentialsError && !addressError && !emailError ? shownError.message : null;
  const changeHref = `/auth/signin?${new URLSearchParams({ step: "address", callbackUrl })}`;

  // The address, read-only, in the first form of step two: password managers pair it with the
  // password there ("username" + "current-password").
  const addressField = (inForm: boolean) =>
    inForm ? (
      <div className="address-row">
        <Field
          id="signin-address"
          label={t("signin.emailLabel")}
          type="email"
          name="email"
          autoComplete="username"
          value={address ?? ""}
          readOnly
        />
        <a href={changeHref} onClick={toAddress} id="signin-change">
          {t("signin.change")}
        </a>
      </div>
    ) : (
      <input type="hidden" name="email" value={address ?? ""} />
    );

  const sections: React.ReactNode[] = [];
  if (address === null) {
    // A refusal naming the organization's sign-in (SsoRequired) offers it first.
    if (connections.length) sections.push(<ConnectionChoice key="connections" connections={connections} />);
    if (asksAddress) {
      sections.push(
        <form key="address" method="post" action="/auth/signin" id="address-form" onSubmit={toMethods}>
          <CsrfField token={csrfToken} />
          <input type="hidden" name="callbackUrl" value={callbackUrl} />
          <Field
            id="input-address"
            ref={addressInput}
            label={t("signin.emailLabel")}
            type="email"
            name="email"
            // The browser's autofill offers passkeys on the field marked "webauthn" (conditional UI).
            autoComplete={passkey ? "username webauthn" : "username"}
            placeholder={t("signin.emailPlaceholder")}
            defaultValue={typed}
            required
            error={addressError}
          />
          <button type="submit" className="button">
            {t("common.continue")}
          </button>
        </form>,
      );
    }
    if (passkey) sections.push(<PasskeySignIn key="passkey" csrfToken={csrfToken} callbackUrl={callbackUrl} />);
    if (oauth.length) {
      sections.push(
        <div key="oauth" className="stack">
          {oauth.map((p) => (
            <DocumentForm key={p.id} action={p.signinUrl} label={t("signin.withProvider", { name: p.name })} pendingLabel={t("signin.redirectingTo", { name: p.name })}>
              <CsrfField token={csrfToken} />
              <input type="hidden" name="callbackUrl" value={callbackUrl} />
            </DocumentForm>
          ))}
        </div>,
      );
    }
  } else {
    if (connections.length) sections.push(<ConnectionChoice key="connections" connections={connections} />);
    if (credentials) {
      // The password form and its "Forgot your password?" are one section: no "or" between them.
      sections.push(
        <div key="credentials" className="stack">
          <DocumentForm action={credentials.callbackUrl} label={t("signin.withPassword")} pendingLabel={t("common.signingIn")} id="credentials-form">
            <CsrfField token={csrfToken} />
            <input type="hidden" name="callbackUrl" value={callbackUrl} />
            {addressField(true)}
            {credentialsError ? (
              <p className="alert" role="alert" id="credentials-error">
                {credentialsError}
              </p>
            ) : null}
            <Field
              id="input-password-for-credentials-provider"
              ref={passwordInput}
              label={t("signin.passwordLabel")}
              type="password"
              name="password"
              autoComplete="current-password"
              required
              autoFocus
              aria-describedby={credentialsError ? "credentials-error" : undefined}
              aria-invalid={credentialsError ? true : undefined}
            />
          </DocumentForm>
          {passwordPages.forgotPassword ? (
            // Beside the password form, its own form: the address just typed goes along in the POST
            // (never in a URL), and the forgotten-password form comes back filled.
            <form method="post" action="/auth/forgot-password" id="forgot-password-start">
              <input type="hidden" name="intent" value="start" />
              <input type="hidden" name="email" value={address ?? ""} />
              <p className="muted">
                <button type="submit" className="link-button" id="forgot-password-link">
                  {t("signin.forgotPassword")}
                </button>
              </p>
            </form>
          ) : null}
        </div>,
      );
    }
    if (emailProvider) {
      sections.push(
        <DocumentForm
          key="email"
          action={emailProvider.signinUrl}
          label={t("signin.sendLink")}
          pendingLabel={t("common.sending")}
          id="email-form"
          buttonRef={emailButton}
        >
          <CsrfField token={csrfToken} />
          <input type="hidden" name="callbackUrl" value={callbackUrl} />
          {addressField(!credentials)}
          {emailError ? (
            <p className="alert" role="alert" id="email-error" data-error-for="email">
              {emailError}
            </p>
          ) : null}
        </DocumentForm>,
      );
    }
  }

  return (
    <AuthCard title={t("signin.title")}>
      {signedInAs ? (
        <p className="notice">
          {t.rich("signin.signedInAs", { address: <Ltr>{signedInAs}</Ltr> })} <a href={callbackUrl}>{t("common.continue")}</a>
        </p>
      ) : null}
      {notice ? (
        <p className="notice" role="status" id="signin-notice">
          {notice}
        </p>
      ) : null}
      {generalError ? (
        <p className="alert" role="alert">
          {generalError}
        </p>
      ) : null}
      {/* Says what changed when the steps swap in place (empty after a page load). */}
      <p className="visually-hidden" aria-live="polite" id="signin-step-status">
        {announcement}
      </p>
      {sections.length === 0 ? <p>{t("signin.noMethod")}</p> : null}
      {sections.flatMap((s, i) => (i === 0 ? [s] : [<p key={`or-${i}`} className="divider">{t("signin.or")}</p>, s]))}
      {passwordPages.signup ? (
        <p>
          {t("signin.noAccount")}{" "}
          <a href={`/auth/signup?${new URLSearchParams({ callbackUrl })}`} id="signup-link">
            {t("signin.createOne")}
          </a>
        </p>
      ) : null}
    </AuthCard>
  );
}
