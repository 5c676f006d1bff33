"""print_environment_info and clear_caches."""
import redraft
import redraft.numpy as jnp


def test_environment_info_names_versions_and_devices(capsys):
    text = redraft.print_environment_info(return_string=True)
    assert f"redraft:    {redraft.__version__}" in text and "numpy:" in text
    assert "devices:" in text
    redraft.print_environment_info()
    assert capsys.readouterr().out.strip() == text


def test_clear_caches_recompiles_with_the_same_results():
    f = redraft.jit(lambda x: jnp.sin(x) * 2)
    g = redraft.grad(lambda x: jnp.sum(jnp.sin(x)))
    before = (f(jnp.ones(2)).tolist(), g(jnp.ones(2)).tolist())
    assert f.cache_size == 1
    redraft.clear_caches()
    assert f.cache_size == 0
    assert (f(jnp.ones(2)).tolist(), g(jnp.ones(2)).tolist()) == before
