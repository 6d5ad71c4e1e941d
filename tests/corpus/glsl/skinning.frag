#version 450
in vec3 v_world_pos;
in vec3 v_normal;
in vec2 v_uv;
in vec3 v_view_dir;
layout(binding = 2) uniform sampler2D albedo;
layout(binding = 0) uniform Camera { mat4 view_proj; vec3 eye; } cam;
layout(location = 0) out vec4 color;
void main() {
    vec3 n = normalize(v_normal);
    vec3 l = normalize(vec3(0.3, 1.0, 0.2));
    float diff = max(dot(n, l), 0.0);
    vec3 h = normalize(l + normalize(v_view_dir));
    float spec = pow(max(dot(n, h), 0.0), 32.0);
    color = vec4(texture(albedo, v_uv).rgb * diff + spec, 1.0);
}
