// The layer that turns what identity providers send into standard SCIM (ADR 158): booleans as
// strings, `op` in any case, filtered paths on absent or unmatched arrays; everything else as sent.
import { describe, expect, it } from "vitest";
import { normalisePatch, withBooleans } from "../../../app/auth/organizations/scim/shapes.server";
import { roleOfGroupName } from "../../../app/auth/organizations/scim/group-roles";

describe("SCIM request shapes", () => {
  it("boolean attributes sent as strings become booleans, at any depth and in any case; other strings stay", () => {
    expect(withBooleans({ active: "False", emails: [{ value: "a@b.example", primary: "TRUE" }], title: "False" })).toEqual({ active: false, emails: [{ value: "a@b.example", primary: true }], title: "False" });
    expect(withBooleans({ active: "maybe" })).toEqual({ active: "maybe" });
  });

  it("op in lower case; a path of active with a string value becomes a boolean", () => {
    expect(normalisePatch([{ op: "Replace", path: "active", value: "False" }], {})).toEqual([{ op: "replace", path: "active", value: false }]);
    expect(normalisePatch([{ op: "REPLACE", value: { active: "True" } }], {})).toEqual([{ op: "replace", value: { active: true } }]);
    expect(normalisePatch([{ op: "Remove", path: "name.givenName" }], {})).toEqual([{ op: "remove", path: "name.givenName" }]);
  });

  it("an add or replace through a filter on an absent or unmatched array adds the element; a matched one is left to the standard", () => {
    const op = { op: "Add", path: 'emails[type eq "work"].value', value: "a@b.example" };
    expect(normalisePatch([op], {})).toEqual([{ op: "add", path: "emails", value: [{ type: "work", value: "a@b.example" }] }]);
    expect(normalisePatch([{ ...op, op: "Replace" }], { emails: [{ type: "home", value: "h@b.example" }] })).toEqual([{ op: "add", path: "emails", value: [{ type: "work", value: "a@b.example" }] }]);
    expect(normalisePatch([{ ...op, op: "replace" }], { emails: [{ type: "Work", value: "old@b.example" }] })).toEqual([{ op: "replace", path: 'emails[type eq "work"].value', value: "a@b.example" }]);
    // A remove through a filter is never turned into anything else.
    expect(normalisePatch([{ op: "remove", path: 'emails[type eq "work"]' }], {})).toEqual([{ op: "remove", path: 'emails[type eq "work"]' }]);
  });

  it("what is not a list of operations is handed on unchanged, for scimmy to refuse", () => {
    expect(normalisePatch("nope", {})).toBe("nope");
    expect(normalisePatch([null, 3], {})).toEqual([null, 3]);
  });

  it("groups named Admin, Admins or Administrators (any case) give the admin role; every other group, member", () => {
    for (const name of ["Admins", "admin", " ADMINISTRATORS ", "Administrator"]) expect(roleOfGroupName(name)).toBe("admin");
    for (const name of ["Engineering", "Admins of nothing", "owner", "Owners"]) expect(roleOfGroupName(name)).toBe("member");
  });
});
