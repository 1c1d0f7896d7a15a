-- Argo CD health of a MessagingBridge (msgbridge.io/v1alpha1), read from the
-- conditions the operator writes. Install it in argocd-cm as
-- resource.customizations.health.msgbridge.io_MessagingBridge (see the
-- chart's README). controllers/argocd_health_test.go runs it against
-- statuses the real operator wrote.
--
--   Progressing  no status for this generation yet, or working towards Ready
--   Healthy      Ready=True: connected and serving
--   Suspended    scaled to zero by spec.suspend, or waiting for a WhatsApp
--                account to be linked
--                (a person must scan the QR code; nothing is broken)
--   Degraded     Stalled=True (a referenced Secret is missing, the bridge's
--                volume is full (DiskFull), WhatsApp refuses its client
--                version (ClientOutdated), its image cannot be pulled
--                (ImagePullFailed)), a suspend that could not scale to zero,
--                or the session is logged out or its heartbeat went stale
local health = {}

local function condition(conditionType)
  if obj.status == nil or obj.status.conditions == nil then
    return nil
  end
  for _, c in ipairs(obj.status.conditions) do
    if c.type == conditionType then
      return c
    end
  end
  return nil
end

-- A condition counts only when the operator wrote it for the current spec.
local function current(c)
  return c ~= nil and c.observedGeneration ~= nil and obj.metadata.generation ~= nil
    and c.observedGeneration >= obj.metadata.generation
end

local function describe(c)
  if c.message ~= nil and c.message ~= "" then
    return c.reason .. ": " .. c.message
  end
  return c.reason
end

local observed = obj.status ~= nil and obj.status.observedGeneration or 0
if obj.metadata.generation ~= nil and observed < obj.metadata.generation then
  health.status = "Progressing"
  health.message = "Waiting for the operator to observe generation " .. obj.metadata.generation
  return health
end

local stalled = condition("Stalled")
if current(stalled) and stalled.status == "True" then
  health.status = "Degraded"
  health.message = describe(stalled)
  return health
end

-- Suspended once the operator scaled the bridge to zero, not merely asked:
-- a suspend it could not carry out (Available reason SuspendFailed) is
-- Degraded, with the reason.
local available = condition("Available")
if obj.spec ~= nil and obj.spec.suspend == true and current(available) then
  if available.reason == "Suspended" then
    health.status = "Suspended"
  else
    health.status = "Degraded"
  end
  health.message = describe(available)
  return health
end

local ready = condition("Ready")
if current(ready) and ready.status == "True" then
  health.status = "Healthy"
  health.message = ready.message
  return health
end

local session = condition("SessionConnected")
if current(session) and session.status == "False" then
  if session.reason == "PairingRequired" then
    health.status = "Suspended"
    health.message = describe(session)
    return health
  end
  if session.reason == "LoggedOut" or session.reason == "HeartbeatStale" then
    health.status = "Degraded"
    health.message = describe(session)
    return health
  end
end

health.status = "Progressing"
if current(ready) then
  health.message = describe(ready)
else
  health.message = "Waiting for the operator to report readiness"
end
return health
