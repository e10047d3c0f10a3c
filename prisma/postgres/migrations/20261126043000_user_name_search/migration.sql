-- /admin's user search (ADR 085): a folded copy of the name, and trigram indexes so that a
-- substring search of the address or the name reads the index, not a million rows.
-- pg_trgm and unaccent are trusted extensions (PostgreSQL 13+): the database owner may create them.
CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE EXTENSION IF NOT EXISTS unaccent;

-- AlterTable
ALTER TABLE "User" ADD COLUMN     "nameSearch" TEXT;

-- Names written before this column: folded as app/db/name-search.ts folds them (unaccent strips
-- the same marks for Latin, Greek and Cyrillic letters).
UPDATE "User" SET "nameSearch" = lower(unaccent("name")) WHERE "name" IS NOT NULL;

CREATE INDEX "User_email_trgm_idx" ON "User" USING gin ("email" gin_trgm_ops);
CREATE INDEX "User_nameSearch_trgm_idx" ON "User" USING gin ("nameSearch" gin_trgm_ops);
