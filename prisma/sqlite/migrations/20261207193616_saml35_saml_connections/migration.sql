-- CreateTable
CREATE TABLE "SamlConnection" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "organizationId" TEXT NOT NULL,
    "idpEntityId" TEXT NOT NULL,
    "ssoUrl" TEXT NOT NULL,
    "certificates" TEXT NOT NULL,
    "domains" TEXT NOT NULL,
    "allowIdpInitiated" BOOLEAN NOT NULL DEFAULT false,
    "attributeMapping" TEXT,
    "defaultRole" TEXT NOT NULL DEFAULT 'member',
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "SamlConnection_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "SamlRequest" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "connectionId" TEXT NOT NULL,
    "userId" TEXT,
    "callbackUrl" TEXT NOT NULL,
    "expires" DATETIME NOT NULL
);

-- CreateTable
CREATE TABLE "SamlAssertionUse" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "connectionId" TEXT NOT NULL,
    "expires" DATETIME NOT NULL
);

-- CreateTable
CREATE TABLE "SamlIdentity" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "connectionId" TEXT NOT NULL,
    "subject" TEXT NOT NULL,
    "userId" TEXT NOT NULL,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "SamlIdentity_connectionId_fkey" FOREIGN KEY ("connectionId") REFERENCES "SamlConnection" ("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "SamlIdentity_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateIndex
CREATE INDEX "SamlConnection_organizationId_idx" ON "SamlConnection"("organizationId");

-- CreateIndex
CREATE INDEX "SamlRequest_expires_idx" ON "SamlRequest"("expires");

-- CreateIndex
CREATE INDEX "SamlAssertionUse_expires_idx" ON "SamlAssertionUse"("expires");

-- CreateIndex
CREATE INDEX "SamlIdentity_userId_idx" ON "SamlIdentity"("userId");

-- CreateIndex
CREATE UNIQUE INDEX "SamlIdentity_connectionId_subject_key" ON "SamlIdentity"("connectionId", "subject");
