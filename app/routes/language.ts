import { redirect } from "react-router";
import { chooseLanguage } from "~/i18n/language-choice.server";
import type { Route } from "./+types/language";

// The language menu's target (app/components/language-menu.tsx); app/i18n/language-choice.server.ts decides.
export const action = ({ request }: Route.ActionArgs) => chooseLanguage(request);

// Nothing to show: a GET (a bookmark, a reload after the POST) goes home.
export const loader = () => redirect("/");
