/**
 * The agent's language model, pluggable: a local simulated model (deterministic text streamed
 * word by word, no network: the default, and what the tests use) or any OpenAI-compatible chat
 * completions endpoint the user configures. The client itself is shared with the Node agent
 * examples (examples/shared/model-client.ts); this module picks one from the demo's settings.
 */
import { OpenAiCompatibleModel, SimulatedModel, type Model } from '../../../examples/shared/model-client.js';
import type { ModelSettings } from '../shared/demo-db.js';

export { OpenAiCompatibleModel, SimulatedModel, type CallOptions, type Model, type ModelRequest } from '../../../examples/shared/model-client.js';

export function modelFor(settings: ModelSettings): Model {
  return settings.kind === 'openai' ? new OpenAiCompatibleModel(settings) : new SimulatedModel();
}
