// The TypeScript ADK's side of the server benchmark (tools/bench/server.sh), served by @google/adk-devtools'
// `adk api_server`: the agent of agent_bench.mjs's workload (a), an LlmAgent with get_weather.
import { FunctionTool, LlmAgent } from '@google/adk';

const tool = new FunctionTool({
  name: 'get_weather',
  description: 'Returns the weather for a city.',
  parameters: { type: 'OBJECT', properties: { city: { type: 'STRING' } }, required: ['city'] },
  execute: async ({ city }) => ({ city, sky: 'sunny' }),
});

export const rootAgent = new LlmAgent({
  name: 'weather',
  model: 'gemini-2.5-flash',
  instruction: 'You answer questions about the weather. Use the get_weather tool.',
  tools: [tool],
});
