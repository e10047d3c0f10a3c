import { data } from "react-router";

// Unmatched URLs (say /favicon.ico) get a plain 404 instead of a logged routing error.
export function loader() {
  throw data("Not found", { status: 404 });
}

export function action() {
  throw data("Not found", { status: 404 });
}

export default function NotFound() {
  return null;
}
