-- /admin's user search (ADR 085): a folded copy of the name. SQLite has no accent folding in SQL:
-- names written before this column are lower-cased here (ASCII), and folded fully at their next change.
-- AlterTable
ALTER TABLE "User" ADD COLUMN "nameSearch" TEXT;

UPDATE "User" SET "nameSearch" = lower("name") WHERE "name" IS NOT NULL;
