// Text put into HTML written by hand (e-mails, the page a starting server answers with): the five
// characters that could end an element or an attribute, escaped. No server-only imports.
export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);
}
