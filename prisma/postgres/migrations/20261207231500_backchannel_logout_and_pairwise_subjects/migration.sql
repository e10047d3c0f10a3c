-- CreateTable
CREATE TABLE "OAuthSessionApp" (
    "id" TEXT NOT NULL,
    "sessionId" TEXT NOT NULL,
    "userId" TEXT NOT NULL,
    "clientId" TEXT NOT NULL,
    "sub" TEXT NOT NULL,
    "sid" TEXT NOT NULL,
    "engineSessionUid" TEXT NOT NULL,
    "idTokenAt" TIMESTAMP(3),
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expiresAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "OAuthSessionApp_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "BackchannelLogout" (
    "id" TEXT NOT NULL,
    "clientId" TEXT NOT NULL,
    "userId" TEXT NOT NULL,
    "sub" TEXT NOT NULL,
    "sid" TEXT,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "nextAttemptAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "claimedUntil" TIMESTAMP(3),
    "sentAt" TIMESTAMP(3),
    "givenUpAt" TIMESTAMP(3),
    "lastError" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "BackchannelLogout_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "OAuthPairwiseSubject" (
    "sub" TEXT NOT NULL,
    "sector" TEXT NOT NULL,
    "userId" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "OAuthPairwiseSubject_pkey" PRIMARY KEY ("sub")
);

-- CreateIndex
CREATE INDEX "OAuthSessionApp_engineSessionUid_clientId_idx" ON "OAuthSessionApp"("engineSessionUid", "clientId");

-- CreateIndex
CREATE INDEX "OAuthSessionApp_userId_idx" ON "OAuthSessionApp"("userId");

-- CreateIndex
CREATE INDEX "OAuthSessionApp_expiresAt_idx" ON "OAuthSessionApp"("expiresAt");

-- CreateIndex
CREATE UNIQUE INDEX "OAuthSessionApp_sessionId_clientId_key" ON "OAuthSessionApp"("sessionId", "clientId");

-- CreateIndex
CREATE INDEX "BackchannelLogout_sentAt_nextAttemptAt_idx" ON "BackchannelLogout"("sentAt", "nextAttemptAt");

-- CreateIndex
CREATE INDEX "BackchannelLogout_createdAt_idx" ON "BackchannelLogout"("createdAt");

-- CreateIndex
CREATE INDEX "OAuthPairwiseSubject_userId_idx" ON "OAuthPairwiseSubject"("userId");

-- CreateIndex
CREATE UNIQUE INDEX "OAuthPairwiseSubject_sector_userId_key" ON "OAuthPairwiseSubject"("sector", "userId");
