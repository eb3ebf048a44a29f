export { startProxy, type ProxyOptions, type RunningProxy } from './proxy.js'
export { startRecordingUpstream, jsonResponder, type RecordedRequest, type RecordingUpstream, type Responder } from './recording-upstream.js'
export { startCatalog, type CatalogOptions, type RunningCatalog } from './catalog.js'
