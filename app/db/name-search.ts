// How /admin's search compares names (ADR 085): lower case, accents and other combining marks
// removed, compatibility forms unified — "José", "JOSÉ" and "jose" are one name to search. The
// stored column (User.nameSearch) and the typed search term go through this same function.

/** A name or search term as the search compares it. */
export function foldForSearch(text: string): string {
  return text.normalize("NFKD").replace(/\p{M}+/gu, "").toLowerCase().replace(/ß/g, "ss");
}
