import httpx


def test_index_lists_sites(offline_server):
    response = httpx.get(offline_server.origin + "/")
    assert response.status_code == 200
    assert "SGR offline suite" in response.text
