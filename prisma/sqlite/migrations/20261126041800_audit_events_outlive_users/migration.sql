-- RedefineTables
PRAGMA defer_foreign_keys=ON;
PRAGMA foreign_keys=OFF;
CREATE TABLE "new_AuthEvent" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "type" TEXT NOT NULL,
    "userId" TEXT,
    "ip" TEXT,
    "userAgent" TEXT,
    "at" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "detail" TEXT
);
INSERT INTO "new_AuthEvent" ("at", "detail", "id", "ip", "type", "userAgent", "userId") SELECT "at", "detail", "id", "ip", "type", "userAgent", "userId" FROM "AuthEvent";
DROP TABLE "AuthEvent";
ALTER TABLE "new_AuthEvent" RENAME TO "AuthEvent";
CREATE INDEX "AuthEvent_userId_at_idx" ON "AuthEvent"("userId", "at");
CREATE INDEX "AuthEvent_type_at_idx" ON "AuthEvent"("type", "at");
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;
