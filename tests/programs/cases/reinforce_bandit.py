"""REINFORCE on a multi-armed bandit: a softmax policy over logits, actions from
random.categorical, rewards from a table, a running baseline, episodes in lax.scan, the
policy gradient by grad of the surrogate, jax.debug.print of the mean reward inside jit, a
schedule dict read with .get and updated with .update."""
import redraft as jax
import redraft.numpy as jnp
from redraft import lax, random

MEANS = jnp.array([0.1, 0.5, 0.9, 0.3])
SCHEDULE = {"lr": 0.5, "decay": 0.9}


def episode(logits, key, n=16):
    k_act, k_noise = random.split(key)
    actions = random.categorical(k_act, logits, shape=(n,))
    rewards = MEANS[actions] + 0.1 * random.normal(k_noise, (n,))
    return actions, rewards


def surrogate(logits, actions, advantages):
    log_probs = jax.nn.log_softmax(logits)[actions]
    return -jnp.mean(log_probs * lax.stop_gradient(advantages))


@jax.jit
def train(logits, key):
    config = dict(SCHEDULE)
    config.update(steps=5)
    lr = config.get("lr", 0.1)

    def step(carry, k):
        logits, baseline, lr = carry
        actions, rewards = episode(logits, k)
        advantages = rewards - baseline
        g = jax.grad(surrogate)(logits, actions, advantages)
        baseline = 0.8 * baseline + 0.2 * jnp.mean(rewards)
        jax.debug.print("mean reward {r}", r=jnp.mean(rewards))
        return (logits - lr * g, baseline, lr * config["decay"]), jnp.mean(rewards)
    keys = random.split(key, config["steps"])
    (logits, baseline, _), means = lax.scan(step, (logits, 0.0, lr), keys)
    return logits, baseline, means


def run():
    logits, baseline, means = train(jnp.zeros(4), random.PRNGKey(31))
    return {"logits": logits, "baseline": baseline, "means": means,
            "policy": jax.nn.softmax(logits)}
