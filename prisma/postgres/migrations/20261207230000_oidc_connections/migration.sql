-- CreateTable
CREATE TABLE "OidcConnection" (
    "id" TEXT NOT NULL,
    "organizationId" TEXT NOT NULL,
    "issuer" TEXT NOT NULL,
    "clientId" TEXT NOT NULL,
    "clientSecretSealed" TEXT NOT NULL,
    "domains" TEXT NOT NULL,
    "defaultRole" TEXT NOT NULL DEFAULT 'member',
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "OidcConnection_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "OidcIdentity" (
    "id" TEXT NOT NULL,
    "connectionId" TEXT NOT NULL,
    "subject" TEXT NOT NULL,
    "userId" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "OidcIdentity_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "OidcConnection_organizationId_idx" ON "OidcConnection"("organizationId");

-- CreateIndex
CREATE INDEX "OidcIdentity_userId_idx" ON "OidcIdentity"("userId");

-- CreateIndex
CREATE UNIQUE INDEX "OidcIdentity_connectionId_subject_key" ON "OidcIdentity"("connectionId", "subject");

-- AddForeignKey
ALTER TABLE "OidcConnection" ADD CONSTRAINT "OidcConnection_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "OidcIdentity" ADD CONSTRAINT "OidcIdentity_connectionId_fkey" FOREIGN KEY ("connectionId") REFERENCES "OidcConnection"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "OidcIdentity" ADD CONSTRAINT "OidcIdentity_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;
