pub mod llm_server;
