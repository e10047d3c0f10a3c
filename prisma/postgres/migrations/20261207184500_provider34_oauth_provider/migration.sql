-- CreateTable
CREATE TABLE "OAuthSigningKey" (
    "kid" TEXT NOT NULL,
    "alg" TEXT NOT NULL,
    "privateJwk" TEXT NOT NULL,
    "activeFrom" TIMESTAMP(3) NOT NULL,
    "publishedUntil" TIMESTAMP(3),
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "OAuthSigningKey_pkey" PRIMARY KEY ("kid")
);

-- CreateTable
CREATE TABLE "OAuthPayload" (
    "kind" TEXT NOT NULL,
    "id" TEXT NOT NULL,
    "payload" TEXT NOT NULL,
    "grantId" TEXT,
    "uid" TEXT,
    "userCode" TEXT,
    "accountId" TEXT,
    "clientId" TEXT,
    "consumedAt" TIMESTAMP(3),
    "expiresAt" TIMESTAMP(3),
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "OAuthPayload_pkey" PRIMARY KEY ("kind","id")
);

-- CreateTable
CREATE TABLE "OAuthClient" (
    "clientId" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "metadata" TEXT NOT NULL,
    "secretSealed" TEXT,
    "firstParty" BOOLEAN NOT NULL DEFAULT false,
    "source" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "lastUsedAt" TIMESTAMP(3),

    CONSTRAINT "OAuthClient_pkey" PRIMARY KEY ("clientId")
);

-- CreateIndex
CREATE INDEX "OAuthSigningKey_publishedUntil_idx" ON "OAuthSigningKey"("publishedUntil");

-- CreateIndex
CREATE INDEX "OAuthPayload_grantId_idx" ON "OAuthPayload"("grantId");

-- CreateIndex
CREATE INDEX "OAuthPayload_uid_idx" ON "OAuthPayload"("uid");

-- CreateIndex
CREATE INDEX "OAuthPayload_userCode_idx" ON "OAuthPayload"("userCode");

-- CreateIndex
CREATE INDEX "OAuthPayload_accountId_idx" ON "OAuthPayload"("accountId");

-- CreateIndex
CREATE INDEX "OAuthPayload_clientId_idx" ON "OAuthPayload"("clientId");

-- CreateIndex
CREATE INDEX "OAuthPayload_expiresAt_idx" ON "OAuthPayload"("expiresAt");

-- CreateIndex
CREATE INDEX "OAuthClient_source_createdAt_idx" ON "OAuthClient"("source", "createdAt");
