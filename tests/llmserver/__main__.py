from tests.llmserver.server import main

main()
