"""coopeval: cooperation-sustaining mechanisms for LLM agents in social dilemmas.

Re-implements the CoopEval benchmark (Tewolde et al., arXiv 2604.15267). Importing the
package is cheap: litellm and llama.cpp are imported lazily by the agents that use them.
"""

__version__ = "0.1.0"
