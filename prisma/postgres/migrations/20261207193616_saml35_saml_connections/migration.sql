-- CreateTable
CREATE TABLE "SamlConnection" (
    "id" TEXT NOT NULL,
    "organizationId" TEXT NOT NULL,
    "idpEntityId" TEXT NOT NULL,
    "ssoUrl" TEXT NOT NULL,
    "certificates" TEXT NOT NULL,
    "domains" TEXT NOT NULL,
    "allowIdpInitiated" BOOLEAN NOT NULL DEFAULT false,
    "attributeMapping" TEXT,
    "defaultRole" TEXT NOT NULL DEFAULT 'member',
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "SamlConnection_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "SamlRequest" (
    "id" TEXT NOT NULL,
    "connectionId" TEXT NOT NULL,
    "userId" TEXT,
    "callbackUrl" TEXT NOT NULL,
    "expires" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "SamlRequest_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "SamlAssertionUse" (
    "id" TEXT NOT NULL,
    "connectionId" TEXT NOT NULL,
    "expires" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "SamlAssertionUse_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "SamlIdentity" (
    "id" TEXT NOT NULL,
    "connectionId" TEXT NOT NULL,
    "subject" TEXT NOT NULL,
    "userId" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "SamlIdentity_pkey" PRIMARY KEY ("id")
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

-- AddForeignKey
ALTER TABLE "SamlConnection" ADD CONSTRAINT "SamlConnection_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "SamlIdentity" ADD CONSTRAINT "SamlIdentity_connectionId_fkey" FOREIGN KEY ("connectionId") REFERENCES "SamlConnection"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "SamlIdentity" ADD CONSTRAINT "SamlIdentity_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;
