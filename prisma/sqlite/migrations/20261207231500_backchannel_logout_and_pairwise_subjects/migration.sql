-- CreateTable
CREATE TABLE "OAuthSessionApp" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "sessionId" TEXT NOT NULL,
    "userId" TEXT NOT NULL,
    "clientId" TEXT NOT NULL,
    "sub" TEXT NOT NULL,
    "sid" TEXT NOT NULL,
    "engineSessionUid" TEXT NOT NULL,
    "idTokenAt" DATETIME,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expiresAt" DATETIME NOT NULL
);

-- CreateTable
CREATE TABLE "BackchannelLogout" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "clientId" TEXT NOT NULL,
    "userId" TEXT NOT NULL,
    "sub" TEXT NOT NULL,
    "sid" TEXT,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "nextAttemptAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "claimedUntil" DATETIME,
    "sentAt" DATETIME,
    "givenUpAt" DATETIME,
    "lastError" TEXT,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP
);

-- CreateTable
CREATE TABLE "OAuthPairwiseSubject" (
    "sub" TEXT NOT NULL PRIMARY KEY,
    "sector" TEXT NOT NULL,
    "userId" TEXT NOT NULL,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP
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
