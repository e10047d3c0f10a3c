-- AlterTable
ALTER TABLE "Organization" ADD COLUMN     "breakGlassOwners" TEXT NOT NULL DEFAULT '',
ADD COLUMN     "requireMfa" BOOLEAN NOT NULL DEFAULT false,
ADD COLUMN     "requireSso" BOOLEAN NOT NULL DEFAULT false,
ADD COLUMN     "sessionAbsoluteMinutes" INTEGER,
ADD COLUMN     "sessionIdleMinutes" INTEGER;
