-- AlterTable
ALTER TABLE "User" ADD COLUMN "disabledBy" TEXT;

-- AlterTable
ALTER TABLE "SamlRequest" ADD COLUMN "bindingHash" TEXT;

-- CreateTable
CREATE TABLE "SamlTicket" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "connectionId" TEXT NOT NULL,
    "requestId" TEXT NOT NULL,
    "bindingHash" TEXT NOT NULL,
    "userId" TEXT,
    "callbackUrl" TEXT NOT NULL,
    "person" TEXT NOT NULL,
    "expires" DATETIME NOT NULL
);

-- RedefineTables
PRAGMA defer_foreign_keys=ON;
PRAGMA foreign_keys=OFF;
CREATE TABLE "new_OidcConnection" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "organizationId" TEXT NOT NULL,
    "issuer" TEXT NOT NULL,
    "clientId" TEXT NOT NULL,
    "clientSecretSealed" TEXT NOT NULL,
    "domains" TEXT NOT NULL,
    "defaultRole" TEXT NOT NULL DEFAULT 'member',
    "allowPrivateAddress" BOOLEAN NOT NULL DEFAULT false,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "OidcConnection_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);
INSERT INTO "new_OidcConnection" ("clientId", "clientSecretSealed", "createdAt", "defaultRole", "domains", "id", "issuer", "organizationId") SELECT "clientId", "clientSecretSealed", "createdAt", "defaultRole", "domains", "id", "issuer", "organizationId" FROM "OidcConnection";
DROP TABLE "OidcConnection";
ALTER TABLE "new_OidcConnection" RENAME TO "OidcConnection";
CREATE INDEX "OidcConnection_organizationId_idx" ON "OidcConnection"("organizationId");
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;

-- CreateIndex
CREATE INDEX "SamlTicket_expires_idx" ON "SamlTicket"("expires");
